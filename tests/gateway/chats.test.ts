/**
 * Data plane — per-chat toggles: switching a server off for chat c1 hides its tools from
 * `GET /v1/tools?chat=c1` (not from c2, not without a chat), refuses `chat: "c1"` calls to it (409),
 * is listed by `GET /v1/chats/c1/servers`, and switching it back on shows the tools again. Servers
 * are named by name or id; unknown ones are 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "./helpers";

describe("data plane: per-chat toggles", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];
  const hidden = uniqueName("hidden");
  const shown = uniqueName("shown");
  let hiddenId: string;
  let shownId: string;

  beforeAll(async () => {
    stack = await startGatewayStack();
    const [a, b] = await Promise.all([startUpstream({ name: "a" }), startUpstream({ name: "b" })]);
    upstreams.push(a, b);
    [hiddenId, shownId] = await Promise.all([
      createConnected(stack, { name: hidden, url: a.url }),
      createConnected(stack, { name: shown, url: b.url }),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  const servers = (tools: Array<{ server: string }>) => [...new Set(tools.map((t) => t.server))].sort();

  it("a new chat has every server on", async () => {
    const toggles = await stack.request("GET", "/v1/chats/c1/servers");
    expect(toggles.status).toBe(200);
    expect(toggles.body.servers).toEqual(
      [
        { id: hiddenId, name: hidden, enabled: true },
        { id: shownId, name: shown, enabled: true },
      ].sort((x, y) => (x.name < y.name ? -1 : 1)),
    );
    expect(servers(await stack.listTools("c1"))).toEqual([hidden, shown].sort());
  });

  it("PUT enabled:false hides the server's tools from that chat only", async () => {
    const put = await stack.request("PUT", `/v1/chats/c1/servers/${hidden}`, { body: { enabled: false } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ id: hiddenId, name: hidden, enabled: false });

    expect(servers(await stack.listTools("c1"))).toEqual([shown]);
    expect(servers(await stack.listTools("c2"))).toEqual([hidden, shown].sort());
    expect(servers(await stack.listTools())).toEqual([hidden, shown].sort());

    const toggles = await stack.request("GET", "/v1/chats/c1/servers");
    expect(toggles.body.servers).toEqual(
      expect.arrayContaining([
        { id: hiddenId, name: hidden, enabled: false },
        { id: shownId, name: shown, enabled: true },
      ]),
    );
    expect(toggles.body.servers).toHaveLength(2);
    const other = await stack.request("GET", "/v1/chats/c2/servers");
    expect(other.body.servers.every((s: { enabled: boolean }) => s.enabled)).toBe(true);
  });

  it("a call to the hidden server for that chat is refused (409 server.unavailable); other chats and no chat may call it", async () => {
    const refused = await stack.callTool(`${hidden}__echo`, { text: "x" }, { chat: "c1" });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "server.unavailable" });

    expect(await stack.callTool(`${shown}__echo`, { text: "y" }, { chat: "c1" })).toMatchObject({
      status: 200,
      body: { text: "y" },
    });
    expect(await stack.callTool(`${hidden}__echo`, { text: "z" }, { chat: "c2" })).toMatchObject({
      status: 200,
      body: { text: "z" },
    });
    expect(await stack.callTool(`${hidden}__echo`, { text: "w" })).toMatchObject({
      status: 200,
      body: { text: "w" },
    });
  });

  it("PUT is idempotent and accepts the server id", async () => {
    const again = await stack.request("PUT", `/v1/chats/c1/servers/${hiddenId}`, {
      body: { enabled: false },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: hiddenId, name: hidden, enabled: false });
    expect(servers(await stack.listTools("c1"))).toEqual([shown]);
  });

  it("PUT enabled:true shows the tools again and the call goes through", async () => {
    const put = await stack.request("PUT", `/v1/chats/c1/servers/${hidden}`, { body: { enabled: true } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ id: hiddenId, name: hidden, enabled: true });
    expect(servers(await stack.listTools("c1"))).toEqual([hidden, shown].sort());
    expect(await stack.callTool(`${hidden}__echo`, { text: "back" }, { chat: "c1" })).toMatchObject({
      status: 200,
      body: { text: "back" },
    });
    const toggles = await stack.request("GET", "/v1/chats/c1/servers");
    expect(toggles.body.servers.every((s: { enabled: boolean }) => s.enabled)).toBe(true);
  });

  it("unknown server → 404 server.not_found", async () => {
    const put = await stack.request("PUT", "/v1/chats/c1/servers/no-such-server", {
      body: { enabled: false },
    });
    expect(put.status).toBe(404);
    expect(put.body).toMatchObject({ code: "server.not_found" });
    const byId = await stack.request("PUT", "/v1/chats/c1/servers/00000000-0000-4000-8000-000000000000", {
      body: { enabled: false },
    });
    expect(byId.status).toBe(404);
  });

  it.each([
    ["missing enabled", {}],
    ["enabled not a boolean", { enabled: "no" }],
    ["unknown field", { enabled: false, extra: true }],
  ])("bad toggle body (%s) → 400", async (_label, body) => {
    const put = await stack.request("PUT", `/v1/chats/c1/servers/${hidden}`, { body });
    expect(put.status).toBe(400);
    expect(put.body).toMatchObject({ code: "request.invalid" });
  });
});
