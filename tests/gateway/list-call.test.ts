/**
 * Data plane — the aggregated catalogue and tool calls against SDK-written upstreams: the list (sorted,
 * only enabled + connected servers, best effort), calls (echo/add, `text` joined, structuredContent
 * passed through, tool-level errors as results, shortened names routed back), and the error contract
 * (400 tool.invalid_name, 404 server.not_found / tool.not_found, 409 server.unavailable, 400 on a bad
 * body — one with the tool's fields beside `arguments` says where they go —, 415 on a body not sent as
 * JSON, 401 without a valid token).
 */
import { qualifyToolName } from "@mcpgw/core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  createConnected,
  createServer,
  parkedPort,
  reaches,
  type Stack,
  startGatewayStack,
  uniqueName,
} from "./helpers";

const DOTTED_TOOL = "dotted.tool.name";
const LONG_TOOL = `a_very_long_tool_name_${"x".repeat(60)}`;

describe.concurrent("data plane: list and call", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];
  const names = {
    alpha: uniqueName("alpha"),
    beta: uniqueName("beta"),
    down: uniqueName("down"),
    off: uniqueName("off"),
  };

  beforeAll(async () => {
    stack = await startGatewayStack();
    const alpha = await startUpstream({ name: "alpha" });
    const beta = await startUpstream({ name: "beta", jsonResponse: true });
    beta.addTool(DOTTED_TOOL, "A tool whose name has dots");
    beta.addTool(LONG_TOOL, "A tool whose qualified name is past 64 characters");
    const off = await startUpstream({ name: "off" });
    upstreams.push(alpha, beta, off);
    const closedPort = await parkedPort();
    const [, , downId, offId] = await Promise.all([
      createConnected(stack, { name: names.alpha, url: alpha.url }),
      createConnected(stack, { name: names.beta, url: beta.url }),
      createServer(stack, { name: names.down, url: `http://127.0.0.1:${closedPort}/mcp` }),
      createServer(stack, { name: names.off, url: off.url, enabled: false }),
    ]);
    await Promise.all([reaches(stack, downId, "failed"), reaches(stack, offId, "disabled")]);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  it("lists every tool of the enabled, connected servers as <server>__<tool>, sorted; failed and disabled servers are left out", async ({
    expect,
  }) => {
    const tools = await stack.listTools();
    const listed = tools.map((tool) => tool.name);
    const sorted = [...listed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(listed).toEqual(sorted);
    expect(new Set(tools.map((tool) => tool.server))).toEqual(new Set([names.alpha, names.beta]));
    for (const server of [names.alpha, names.beta]) {
      for (const tool of ["echo", "add", "fail", "slow"]) expect(listed).toContain(`${server}__${tool}`);
    }
    expect(listed.filter((name) => name.startsWith(`${names.alpha}__`))).toHaveLength(4);
    expect(listed.filter((name) => name.startsWith(`${names.beta}__`))).toHaveLength(6);
    expect(listed.some((name) => name.startsWith(`${names.down}__`))).toBe(false);
    expect(listed.some((name) => name.startsWith(`${names.off}__`))).toBe(false);

    const echo = tools.find((tool) => tool.name === `${names.alpha}__echo`);
    expect(echo).toEqual({
      name: `${names.alpha}__echo`,
      server: names.alpha,
      description: "Echo the given text",
      inputSchema: expect.objectContaining({ type: "object", properties: { text: { type: "string" } } }),
    });
    for (const tool of tools) expect(tool.name.length).toBeLessThanOrEqual(64);
  });

  it("calls echo and add: content, text (joined text parts), structuredContent passed through", async ({
    expect,
  }) => {
    const echo = await stack.callTool(`${names.alpha}__echo`, { text: "hello gateway" });
    expect(echo).toEqual({
      status: 200,
      body: {
        content: [{ type: "text", text: "hello gateway" }],
        structuredContent: { text: "hello gateway" },
        text: "hello gateway",
        isError: false,
      },
    });
    const add = await stack.callTool(`${names.beta}__add`, { a: 2, b: 40 });
    expect(add).toEqual({
      status: 200,
      body: {
        content: [{ type: "text", text: "42" }],
        structuredContent: { sum: 42 },
        text: "42",
        isError: false,
      },
    });
  });

  it("a tool-level failure is a 200 result with isError: true", async ({ expect }) => {
    const failed = await stack.callTool(`${names.alpha}__fail`, {});
    expect(failed).toEqual({
      status: 200,
      body: { content: [{ type: "text", text: "boom" }], text: "boom", isError: true },
    });
  });

  it("arguments default to {} when left out", async ({ expect }) => {
    const response = await stack.request("POST", `/v1/tools/${names.alpha}__fail/call`, { body: {} });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ isError: true, text: "boom" });
  });

  it("routes shortened names (64-char rule, unsafe characters) back to the upstream's tool", async ({
    expect,
  }) => {
    const tools = await stack.listTools();
    const dotted = qualifyToolName(names.beta, DOTTED_TOOL);
    const long = qualifyToolName(names.beta, LONG_TOOL);
    expect(dotted).not.toBe(`${names.beta}__${DOTTED_TOOL}`);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining([dotted, long]));

    expect(await stack.callTool(dotted, {})).toMatchObject({ status: 200, body: { text: DOTTED_TOOL } });
    expect(await stack.callTool(long, {})).toMatchObject({ status: 200, body: { text: LONG_TOOL } });
  });

  it.for([
    ["no separator", "justaname"],
    ["empty server", "__echo"],
    ["empty tool", "alpha__"],
    ["server with a space", "bad server__echo"],
    ["longer than 64", `alpha__${"t".repeat(64)}`],
  ] as const)("malformed name (%s) → 400 tool.invalid_name", async ([, name], { expect }) => {
    const response = await stack.callTool(name, {});
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: "tool.invalid_name", status: 400 });
  });

  it("unknown server → 404 server.not_found; unknown tool → 404 tool.not_found", async ({ expect }) => {
    const server = await stack.request("POST", "/v1/tools/nosuchserver__echo/call", {
      body: { arguments: {} },
    });
    expect(server.status).toBe(404);
    expect(server.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(server.body).toMatchObject({ code: "server.not_found", status: 404 });

    const tool = await stack.callTool(`${names.alpha}__nosuchtool`, {});
    expect(tool.status).toBe(404);
    expect(tool.body).toMatchObject({ code: "tool.not_found", status: 404 });
  });

  it("disabled server → 409 server.unavailable; not-connected (failed) server → 409 server.unavailable", async ({
    expect,
  }) => {
    const disabled = await stack.callTool(`${names.off}__echo`, { text: "x" });
    expect(disabled.status).toBe(409);
    expect(disabled.body).toMatchObject({ code: "server.unavailable", status: 409 });

    const failed = await stack.callTool(`${names.down}__echo`, { text: "x" });
    expect(failed.status).toBe(409);
    expect(failed.body).toMatchObject({ code: "server.unavailable", status: 409 });
  });

  it("an upstream JSON-RPC error (invalid params) → 502 upstream.error, and the server stays connected", async ({
    expect,
  }) => {
    const response = await stack.callTool(`${names.alpha}__add`, { a: "two", b: 3 });
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ code: "upstream.error" });
    const after = await stack.callTool(`${names.alpha}__add`, { a: 1, b: 1 });
    expect(after).toMatchObject({ status: 200, body: { text: "2" } });
  });

  it.for([
    ["unknown top-level field", { arguments: {}, extra: 1 }],
    ["arguments not an object", { arguments: "text" }],
    ["arguments an array", { arguments: [1, 2] }],
    ["chat not a string", { arguments: {}, chat: 5 }],
    ["chat empty", { arguments: {}, chat: "" }],
  ])("bad body (%s) → 400 request.invalid", async ([, body], { expect }) => {
    const response = await stack.request("POST", `/v1/tools/${names.alpha}__echo/call`, { body });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: "request.invalid", status: 400 });
  });

  it("a tool's own field beside arguments → 400 saying where it goes", async ({ expect }) => {
    const response = await stack.request("POST", `/v1/tools/${names.alpha}__echo/call`, {
      body: { message: "hi" },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: "request.invalid",
      detail:
        'Unknown field "message": put the tool\'s arguments under "arguments": {"arguments": {"message": …}}',
      errors: [{ field: "", message: expect.stringMatching(/^Unknown field "message"/) }],
    });
  });

  it("a body that is not sent as JSON → 415 request.unsupported_media_type with the header to send", async ({
    expect,
  }) => {
    const response = await stack.request("POST", `/v1/tools/${names.alpha}__echo/call`, {
      body: { arguments: { text: "x" } },
      headers: { "content-type": "text/plain" },
    });
    expect(response.status).toBe(415);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.body).toMatchObject({ code: "request.unsupported_media_type", status: 415 });
    expect(response.body.detail).toContain("Content-Type: application/json");
  });

  it("malformed JSON → 400 request.malformed_json", async ({ expect }) => {
    const response = await stack.request("POST", `/v1/tools/${names.alpha}__echo/call`, {
      body: "{not json",
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: "request.malformed_json" });
  });

  it.for([
    ["no token", ""],
    ["bad token", "Bearer not-the-token"],
    ["not a bearer", "Basic dXNlcjpwYXNz"],
  ] as const)("%s → 401 on every data-plane route", async ([, authorization], { expect }) => {
    const routes: Array<[string, string, unknown?]> = [
      ["GET", "/v1/tools"],
      ["GET", "/v1/tools?chat=c1"],
      ["POST", `/v1/tools/${names.alpha}__echo/call`, { arguments: { text: "x" } }],
      ["GET", "/v1/chats/c1/servers"],
      ["PUT", `/v1/chats/c1/servers/${names.alpha}`, { enabled: false }],
    ];
    for (const [method, path, body] of routes) {
      const response = await stack.request(method, path, { headers: { authorization }, body });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body).toMatchObject({ code: "auth.unauthorized" });
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    // Nothing was toggled by the refused PUT.
    const toggles = await stack.request("GET", "/v1/chats/c1/servers");
    expect(toggles.body.servers.every((s: { enabled: boolean }) => s.enabled)).toBe(true);
  });
});
