/**
 * Key scopes bind server identities, not names: `servers` entries (names or ids) are resolved to ids
 * when the key is made (an unknown one → 400 `key.unknown_server`); a renamed server keeps its keys'
 * access everywhere (`/v1/tools`, calls, `/mcp`, `/mcp/{server}`, chat toggles); a new server that
 * takes an old name gains none; the key view shows the servers' current names; a legacy key stored
 * with names and no ids fails closed.
 */
import { randomUUID } from "node:crypto";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { API_KEY_PREFIX, hashApiKey } from "@mcpgw/aws";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Json, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { waitFor } from "../support/stack";
import { type CreatedKey, createKey, rawRequest } from "./helpers";

const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };

describe("key scopes bind server ids", () => {
  let stack: Stack;
  let upstreams: Upstream[];
  const first = uniqueName("first");
  const renamed = uniqueName("renamed");
  const other = uniqueName("other");
  let firstId: string;
  let otherId: string;
  let byName: CreatedKey;
  let byId: CreatedKey;

  /** A request with `Authorization: Bearer <key>`. */
  const as =
    (key: CreatedKey | string) =>
    (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> =>
      stack.request(method, path, {
        headers: { authorization: `Bearer ${typeof key === "string" ? key : key.key}` },
        ...(body === undefined ? {} : { body }),
      });

  const mcpToolNames = async (path: string, key: CreatedKey) => {
    const response = await rawRequest(`${stack.api.url}${path}`, {
      headers: { authorization: `Bearer ${key.key}` },
      body: TOOLS_LIST,
    });
    return {
      status: response.status,
      names: (response.body?.result?.tools ?? []).map((tool: { name: string }) => tool.name) as string[],
    };
  };

  const toolNames = async (key: CreatedKey) => {
    const response = await as(key)("GET", "/v1/tools");
    if (response.status !== 200) throw new Error(`GET /v1/tools → ${response.status}`);
    return (response.body.tools as Array<{ name: string }>).map((tool) => tool.name);
  };

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstreams = await Promise.all([1, 2, 3].map((n) => startUpstream({ name: `upstream-${n}` })));
    [firstId, otherId] = await Promise.all([
      createConnected(stack, { name: first, url: upstreams[0]?.url }),
      createConnected(stack, { name: other, url: upstreams[1]?.url }),
    ]);
    [byName, byId] = await Promise.all([
      createKey(stack, "by name", [first]),
      // An id and the same server's name name one server: it is stored once.
      createKey(stack, "by id", [otherId, other]),
    ]);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.allSettled((upstreams ?? []).map((upstream) => upstream.close()));
  });

  it("creation resolves names and ids to server ids and shows the current names", ({ expect }) => {
    expect(byName).toMatchObject({ servers: [first], serverIds: [firstId] });
    expect(byId).toMatchObject({ servers: [other], serverIds: [otherId] });
  });

  it("an unknown server at creation → 400 key.unknown_server naming every unknown entry; no key is made", async ({
    expect,
  }) => {
    const ghostId = randomUUID();
    const before = (await stack.call("GET", "/v1/keys")).body.keys.length;
    const refused = await stack.call("POST", "/v1/keys", {
      name: "ghostly",
      servers: [first, "ghost", ghostId],
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: "key.unknown_server", unknown: ["ghost", ghostId] });
    expect(refused.body.detail).toContain("'ghost'");
    expect((await stack.call("GET", "/v1/keys")).body.keys).toHaveLength(before);
  });

  it("a renamed server keeps its keys' access: tools, calls, /mcp, /mcp/{server}, chats and the key view", {
    timeout: 30_000,
  }, async ({ expect }) => {
    const patched = await stack.call("PATCH", `/v1/servers/${firstId}`, { name: renamed });
    expect(patched.status).toBe(200);
    await waitFor(
      () => toolNames(byName),
      (names) => names.includes(`${renamed}__echo`),
      { timeoutMs: 15_000 },
    );
    expect((await toolNames(byName)).every((name) => name.startsWith(`${renamed}__`))).toBe(true);
    const called = await as(byName)("POST", `/v1/tools/${renamed}__echo/call`, { arguments: { text: "hi" } });
    expect(called).toMatchObject({ status: 200, body: { text: "hi", isError: false } });

    const front = await mcpToolNames(`/mcp/${renamed}`, byName);
    expect(front.status).toBe(200);
    expect(front.names).toEqual(["add", "echo", "fail", "slow"]);
    expect((await mcpToolNames("/mcp", byName)).names).toContain(`${renamed}__echo`);

    const chat = uniqueName("chat");
    const toggles = await as(byName)("GET", `/v1/chats/${chat}/servers`);
    expect(toggles.body.servers.map((server: { name: string }) => server.name)).toEqual([renamed]);
    expect((await as(byName)("PUT", `/v1/chats/${chat}/servers/${renamed}`, { enabled: false })).status).toBe(
      200,
    );

    const listed = (await stack.call("GET", "/v1/keys")).body.keys.find(
      (key: { id: string }) => key.id === byName.id,
    );
    expect(listed).toEqual({
      id: byName.id,
      name: "by name",
      servers: [renamed],
      serverIds: [firstId],
      owner: null,
      rateLimit: null,
      toolsets: [],
      toolPolicy: null,
      createdAt: byName.createdAt,
    });
  });

  it("a new server that takes the old name gains no access from keys scoped to the old server", {
    timeout: 30_000,
  }, async ({ expect }) => {
    const usurperId = await createConnected(stack, { name: first, url: upstreams[2]?.url });
    expect(usurperId).not.toBe(firstId);

    expect((await toolNames(byName)).some((name) => name.startsWith(`${first}__`))).toBe(false);
    const call = await as(byName)("POST", `/v1/tools/${first}__echo/call`, { arguments: { text: "x" } });
    expect(call.status).toBe(404);
    expect(call.body).toMatchObject({ code: "server.not_found" });
    expect(upstreams[2]?.toolCalls).toBe(0);
    expect((await mcpToolNames(`/mcp/${first}`, byName)).status).toBe(404);
    expect((await mcpToolNames("/mcp", byName)).names.some((name) => name.startsWith(`${first}__`))).toBe(
      false,
    );
    const chat = uniqueName("chat");
    expect((await as(byName)("PUT", `/v1/chats/${chat}/servers/${first}`, { enabled: false })).status).toBe(
      404,
    );
    const toggles = await as(byName)("GET", `/v1/chats/${chat}/servers`);
    expect(toggles.body.servers.map((server: { name: string }) => server.name)).toEqual([renamed]);

    // A key made by that name now binds the new server.
    const fresh = await createKey(stack, "new holder", [first]);
    expect(fresh).toMatchObject({ servers: [first], serverIds: [usurperId] });
  });

  it("a deleted server drops out of the key view's names; its id stays and grants nothing", async ({
    expect,
  }) => {
    expect((await stack.call("DELETE", `/v1/servers/${otherId}`)).status).toBe(204);
    const listed = (await stack.call("GET", "/v1/keys")).body.keys.find(
      (key: { id: string }) => key.id === byId.id,
    );
    expect(listed).toMatchObject({ servers: [], serverIds: [otherId] });
  });

  it("a legacy key stored with server names and no ids fails closed: scoped to nothing", {
    timeout: 15_000,
  }, async ({ expect }) => {
    const key = `${API_KEY_PREFIX}legacy-${randomUUID()}`;
    const id = randomUUID();
    await stack.store.clients.ddb.send(
      new PutCommand({
        TableName: stack.store.config.tableName,
        Item: {
          pk: `KEYHASH#${hashApiKey(key)}`,
          sk: "KEY",
          kind: "APIKEY",
          kindSort: id,
          id,
          name: "legacy",
          servers: [renamed],
          createdAt: new Date().toISOString(),
        },
      }),
    );
    const legacy = as(key);
    // Usable (it authenticates) once the key index has seen it…
    const tools = await waitFor(
      () => legacy("GET", "/v1/tools"),
      (response) => response.status === 200,
      { timeoutMs: 5_000 },
    );
    // …but it may use nothing, not even the server its stored name still matches.
    expect(tools.body.tools).toEqual([]);
    const call = await legacy("POST", `/v1/tools/${renamed}__echo/call`, { arguments: { text: "x" } });
    expect(call.status).toBe(404);
    const listed = (await stack.call("GET", "/v1/keys")).body.keys.find((k: { id: string }) => k.id === id);
    expect(listed).toMatchObject({ servers: [], serverIds: [] });
  });
});
