/**
 * The MCP endpoints end to end with the official SDK client (StreamableHTTPClientTransport, key in
 * `Authorization`): `/mcp` aggregates two different upstreams (the SDK fixture and the published
 * server-everything) as `<server>__<tool>`; a scoped key's list shrinks and its calls elsewhere are
 * refused with JSON-RPC errors; `/mcp/{server}` fronts one upstream under its own names; pagination;
 * tool-level errors stay results; an upstream killed mid-call is a JSON-RPC error with a clear
 * message; Origin and Host (DNS-rebinding) checks.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  createConnected,
  logLines,
  type Stack,
  spawnUpstream,
  startGatewayStack,
  type UpstreamProcess,
  uniqueName,
} from "../gateway/helpers";
import { waitFor } from "../support/stack";
import { type CreatedKey, connectClient, createKey, INITIALIZE, listAllTools, rawRequest } from "./helpers";

const ALLOWED_ORIGIN = "https://app.example.com";

describe("MCP endpoints with the SDK client", () => {
  let stack: Stack;
  let alphaUpstream: Upstream;
  let bigUpstream: Upstream;
  let everything: Everything;
  let doomedUpstream: UpstreamProcess;
  const alpha = uniqueName("alpha");
  const ev = uniqueName("ev");
  const big = uniqueName("big");
  const doomed = uniqueName("doomed");
  let fullKey: CreatedKey;
  let alphaKey: CreatedKey;
  const clients: Client[] = [];

  /** A connected SDK client, closed after the suite. */
  async function client(path: string, key: string, headers?: Record<string, string>): Promise<Client> {
    const connected = await connectClient(`${stack.api.url}${path}`, key, headers);
    clients.push(connected);
    return connected;
  }

  /** The McpError a call was rejected with. */
  async function rejection(promise: Promise<unknown>): Promise<McpError> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof McpError) return error;
      throw error;
    }
    throw new Error("expected the request to be rejected with a JSON-RPC error");
  }

  beforeAll(async () => {
    [stack, alphaUpstream, bigUpstream, everything, doomedUpstream] = await Promise.all([
      // /mcp lists every tool here (179, paged): search mode, past 64 by default, is search-mode.test.ts's.
      startGatewayStack({
        mcp: { allowedOrigins: [ALLOWED_ORIGIN] },
        gateway: { searchModeThreshold: 1_000 },
      }),
      startUpstream({ name: "alpha-upstream" }),
      startUpstream({ name: "big-upstream", extraTools: 150 }),
      startEverything(),
      spawnUpstream(["--port", "0", "--name", "doomed-upstream"]),
    ]);
    await Promise.all([
      createConnected(stack, { name: alpha, url: alphaUpstream.url }),
      createConnected(stack, { name: ev, url: everything.url }),
      createConnected(stack, { name: big, url: bigUpstream.url }),
      createConnected(stack, { name: doomed, url: doomedUpstream.url }),
    ]);
    [fullKey, alphaKey] = await Promise.all([
      createKey(stack, "every server"),
      createKey(stack, "alpha only", [alpha]),
    ]);
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await stack?.stop();
    await Promise.allSettled([
      alphaUpstream?.close(),
      bigUpstream?.close(),
      everything?.stop(),
      doomedUpstream?.kill(),
    ]);
  });

  it("/mcp with a key: initialize names the gateway, tools of both upstreams are listed qualified and callable", async ({
    expect,
  }) => {
    const mcp = await client("/mcp", fullKey.key);
    expect(mcp.getServerVersion()).toMatchObject({ name: "mcp-gateway" });
    expect(mcp.getServerCapabilities()).toMatchObject({ tools: {} });

    const { tools } = await listAllTools(mcp);
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([`${alpha}__echo`, `${alpha}__add`, `${ev}__echo`, `${ev}__get-sum`]),
    );
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(names).size).toBe(names.length);
    expect(tools.find((tool) => tool.name === `${alpha}__add`)).toMatchObject({
      description: "Add two numbers",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
      outputSchema: { type: "object", properties: { sum: { type: "number" } } },
    });
    // The same catalogue the REST data plane shows this key.
    const rest = await stack.request("GET", "/v1/tools", {
      headers: { authorization: `Bearer ${fullKey.key}` },
    });
    expect(rest.status).toBe(200);
    expect(names).toEqual(rest.body.tools.map((tool: { name: string }) => tool.name));

    const sum = await mcp.callTool({ name: `${alpha}__add`, arguments: { a: 2, b: 40 } });
    expect(sum).toEqual({
      content: [{ type: "text", text: "42" }],
      structuredContent: { sum: 42 },
      isError: false,
    });
    const echoed = await mcp.callTool({ name: `${ev}__echo`, arguments: { message: "through the gateway" } });
    expect(echoed).toMatchObject({
      content: [{ type: "text", text: "Echo: through the gateway" }],
      isError: false,
    });
    const evSum = await mcp.callTool({ name: `${ev}__get-sum`, arguments: { a: 19, b: 23 } });
    expect(evSum.content).toEqual([{ type: "text", text: "The sum of 19 and 23 is 42." }]);
  });

  it("a key scoped to one server: the list shrinks to its tools, calls to other servers are JSON-RPC errors", async ({
    expect,
  }) => {
    const full = await client("/mcp", fullKey.key);
    const scoped = await client("/mcp", alphaKey.key);
    const all = (await listAllTools(full)).tools.map((tool) => tool.name);
    const mine = (await listAllTools(scoped)).tools.map((tool) => tool.name);
    expect(mine).toEqual([`${alpha}__add`, `${alpha}__echo`, `${alpha}__fail`, `${alpha}__slow`]);
    expect(all.length).toBeGreaterThan(mine.length);
    expect(all).toEqual(expect.arrayContaining(mine));

    // Its own server works…
    const echoed = await scoped.callTool({ name: `${alpha}__echo`, arguments: { text: "mine" } });
    expect(echoed).toMatchObject({ content: [{ type: "text", text: "mine" }], isError: false });
    // …another server's tool is refused as if that server did not exist (no catalogue leak).
    const refused = await rejection(
      scoped.callTool({ name: `${ev}__echo`, arguments: { message: "not yours" } }),
    );
    expect(refused.code).toBe(ErrorCode.InvalidParams);
    expect(refused.message).toContain(`No server named '${ev}'`);
    expect(refused.data).toMatchObject({ code: "server.not_found" });
    // The same refusal for a server that really does not exist, and for an unknown tool.
    const unknownServer = await rejection(scoped.callTool({ name: "nosuch__echo", arguments: {} }));
    expect(unknownServer.code).toBe(ErrorCode.InvalidParams);
    expect(unknownServer.message).toContain("No server named 'nosuch'");
    const unknownTool = await rejection(full.callTool({ name: `${alpha}__nope`, arguments: {} }));
    expect(unknownTool.code).toBe(ErrorCode.InvalidParams);
    expect(unknownTool.data).toMatchObject({ code: "tool.not_found" });
    const unqualified = await rejection(full.callTool({ name: "echo", arguments: {} }));
    expect(unqualified.code).toBe(ErrorCode.InvalidParams);
  });

  it("/mcp/{server}: one upstream under its own tool names; a server outside the key's scope → 404", async ({
    expect,
  }) => {
    const front = await client(`/mcp/${alpha}`, alphaKey.key);
    // The upstream's own identity, as it reported it (the gateway names itself in `_meta`).
    expect(front.getServerVersion()).toMatchObject({ name: "alpha-upstream" });
    const { tools } = await listAllTools(front);
    expect(tools.map((tool) => tool.name)).toEqual(["add", "echo", "fail", "slow"]);
    expect(tools.find((tool) => tool.name === "echo")).toMatchObject({
      description: "Echo the given text",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    });
    const echoed = await front.callTool({ name: "echo", arguments: { text: "unprefixed" } });
    expect(echoed).toEqual({
      content: [{ type: "text", text: "unprefixed" }],
      structuredContent: { text: "unprefixed" },
      isError: false,
    });
    // The qualified name is not a tool of this endpoint.
    const qualified = await rejection(front.callTool({ name: `${alpha}__echo`, arguments: { text: "x" } }));
    expect(qualified.code).toBe(ErrorCode.InvalidParams);

    // server-everything through its own front, with the unscoped key.
    const evFront = await client(`/mcp/${ev}`, fullKey.key);
    const evTools = (await listAllTools(evFront)).tools.map((tool) => tool.name);
    expect(evTools).toEqual(expect.arrayContaining(["echo", "get-sum"]));
    expect(evTools.every((name) => !name.includes("__"))).toBe(true);
    const sum = await evFront.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    expect(sum.content).toEqual([{ type: "text", text: "The sum of 1 and 2 is 3." }]);

    // Outside the key's scope, and nonexistent: the same 404 before any MCP exchange.
    for (const path of [`/mcp/${ev}`, "/mcp/no-such-server"]) {
      const raw = await rawRequest(`${stack.api.url}${path}`, {
        headers: { authorization: `Bearer ${alphaKey.key}` },
        body: INITIALIZE,
      });
      expect(raw.status, path).toBe(404);
      expect(raw.body).toMatchObject({ code: "server.not_found" });
    }
    await expect(connectClient(`${stack.api.url}/mcp/${ev}`, alphaKey.key)).rejects.toThrow(/404/);
  });

  it("/mcp/{server} passes the upstream's resources and prompts through; /mcp serves every server's, namespaced", async ({
    expect,
  }) => {
    const evFront = await client(`/mcp/${ev}`, fullKey.key);
    expect(evFront.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    const { resources } = await evFront.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const first = resources[0] as { uri: string };
    const read = await evFront.readResource({ uri: first.uri });
    expect(read.contents[0]).toMatchObject({ uri: first.uri });
    const templates = await evFront.listResourceTemplates();
    expect(templates.resourceTemplates.length).toBeGreaterThan(0);
    const prompts = (await evFront.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt"]));
    expect(await evFront.getPrompt({ name: "args-prompt", arguments: { city: "Lisbon" } })).toMatchObject({
      messages: [{ role: "user", content: { type: "text", text: "What's weather in Lisbon?" } }],
    });
    // An upstream error stays a JSON-RPC error.
    const missing = await rejection(evFront.readResource({ uri: "demo://resource/nope" }));
    expect(missing.code).not.toBe(ErrorCode.InternalError);

    // The SDK fixture offers tools only: so does its front.
    const alphaFront = await client(`/mcp/${alpha}`, fullKey.key);
    expect(alphaFront.getServerCapabilities()?.resources).toBeUndefined();
    expect(alphaFront.getServerCapabilities()?.prompts).toBeUndefined();
    expect((await rejection(alphaFront.listResources())).code).toBe(ErrorCode.MethodNotFound);

    // /mcp: every server's resources under gateway URIs (scheme kept), read back through the gateway;
    // prompts as <server>__<prompt>.
    const all = await client("/mcp", fullKey.key);
    const gatewayResources = (await all.listResources()).resources as Array<{ uri: string }>;
    const mapped = `${first.uri.split(":")[0]}://mcpgw/${ev}/${encodeURIComponent(first.uri)}`;
    expect(gatewayResources.map((resource) => resource.uri)).toContain(mapped);
    const readThrough = await all.readResource({ uri: mapped });
    expect(readThrough.contents[0]).toMatchObject({ uri: mapped });
    expect(JSON.stringify(readThrough.contents[0])).toEqual(
      JSON.stringify({ ...read.contents[0], uri: mapped }),
    );
    const allPrompts = (await all.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(allPrompts).toEqual(expect.arrayContaining([`${ev}__simple-prompt`, `${ev}__args-prompt`]));
    expect(await all.getPrompt({ name: `${ev}__args-prompt`, arguments: { city: "Porto" } })).toMatchObject({
      messages: [{ role: "user", content: { type: "text", text: "What's weather in Porto?" } }],
    });
    // A name or URI of no server's is invalid params, not an internal error.
    expect((await rejection(all.readResource({ uri: first.uri }))).code).toBe(ErrorCode.InvalidParams);
    expect((await rejection(all.getPrompt({ name: "simple-prompt" }))).code).toBe(ErrorCode.InvalidParams);
  });

  it("pagination: 154 tools of one upstream come in two pages through nextCursor; a bad cursor is invalid params", async ({
    expect,
  }) => {
    const front = await client(`/mcp/${big}`, fullKey.key);
    const first = await front.listTools();
    expect(first.tools).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await front.listTools({ cursor: first.nextCursor as string });
    expect(second.tools).toHaveLength(54);
    expect(second.nextCursor).toBeUndefined();
    const names = [...first.tools, ...second.tools].map((tool) => tool.name);
    expect(new Set(names).size).toBe(154);
    expect(names).toEqual(expect.arrayContaining(["echo", "tool_000", "tool_149"]));

    // The aggregated endpoint pages the same way and loses nothing across pages.
    const aggregated = await listAllTools(await client("/mcp", fullKey.key));
    expect(aggregated.pages.length).toBeGreaterThanOrEqual(2);
    expect(aggregated.pages.slice(0, -1).every((size) => size === 100)).toBe(true);
    expect(aggregated.tools.filter((tool) => tool.name.startsWith(`${big}__`))).toHaveLength(154);

    const bad = await rejection(front.listTools({ cursor: "not-a-cursor" }));
    expect(bad.code).toBe(ErrorCode.InvalidParams);
  });

  it("a tool-level error stays an isError result, on both endpoints", async ({ expect }) => {
    const mcp = await client("/mcp", fullKey.key);
    expect(await mcp.callTool({ name: `${alpha}__fail`, arguments: {} })).toEqual({
      content: [{ type: "text", text: "boom" }],
      isError: true,
    });
    const front = await client(`/mcp/${alpha}`, fullKey.key);
    expect(await front.callTool({ name: "fail", arguments: {} })).toMatchObject({ isError: true });
    // Invalid arguments: server-everything answers with a tool-level error too.
    const invalid = await mcp.callTool({ name: `${ev}__get-sum`, arguments: { a: "one", b: 2 } });
    expect(invalid.isError).toBe(true);
  });

  it("an upstream killed mid-call → a JSON-RPC internal error naming the server and what happened", {
    timeout: 30_000,
  }, async ({ expect }) => {
    const mcp = await client("/mcp", fullKey.key);
    const call = rejection(mcp.callTool({ name: `${doomed}__slow`, arguments: { ms: 20_000 } }));
    await waitFor(
      async () => logLines(stack).some((line) => line.msg === "tool call started" && line.server === doomed),
      (seen) => seen,
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // the POST is at the upstream
    const killedAt = Date.now();
    await doomedUpstream.kill();

    const error = await call;
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    expect(error.code).toBe(ErrorCode.InternalError);
    expect(error.message).toContain(`Server '${doomed}' could not be reached`);
    expect(error.data).toMatchObject({ code: "upstream.unreachable" });

    // The server is now marked failed: the next call is refused up front, still as a JSON-RPC error.
    const refused = await waitFor(
      () => rejection(mcp.callTool({ name: `${doomed}__echo`, arguments: { text: "x" } })),
      (e) => (e.data as { code?: string } | undefined)?.code === "server.unavailable",
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(refused.code).toBe(ErrorCode.InvalidParams);
    expect(refused.message).toContain(`Server '${doomed}' is failed`);
  });

  it("Origin: a foreign browser origin → 403; loopback and configured origins are accepted", async ({
    expect,
  }) => {
    const post = (path: string, origin?: string) =>
      rawRequest(`${stack.api.url}${path}`, {
        headers: { authorization: `Bearer ${fullKey.key}`, ...(origin ? { origin } : {}) },
        body: INITIALIZE,
      });
    for (const path of ["/mcp", `/mcp/${alpha}`]) {
      for (const origin of ["https://evil.example", "http://localhost.evil.example", "null"]) {
        const refused = await post(path, origin);
        expect(refused.status, `${path} ${origin}`).toBe(403);
        expect(refused.body).toMatchObject({ code: "auth.forbidden" });
      }
      for (const origin of [undefined, "http://localhost:5173", "http://127.0.0.1:8080", ALLOWED_ORIGIN]) {
        const accepted = await post(path, origin);
        expect(accepted.status, `${path} ${origin}`).toBe(200);
        expect(accepted.body).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: {} } });
      }
    }
    // The SDK client sending a foreign Origin cannot even initialize.
    await expect(
      connectClient(`${stack.api.url}/mcp`, fullKey.key, { origin: "https://evil.example" }),
    ).rejects.toThrow(/403/);
    // Without loopbackOnly the Host header is not checked (a deployed gateway has a real name).
    const otherHost = await rawRequest(`${stack.api.url}/mcp`, {
      headers: { authorization: `Bearer ${fullKey.key}`, host: "gateway.example.com" },
      body: INITIALIZE,
    });
    expect(otherHost.status).toBe(200);
  });

  it("2025 callers: initialize opens a session (GET stream, DELETE ends it); a sessionless JSON request stands alone", async ({
    expect,
  }) => {
    const auth = { authorization: `Bearer ${fullKey.key}` };
    const init = await rawRequest(`${stack.api.url}/mcp`, { headers: auth, body: INITIALIZE });
    expect(init.status).toBe(200);
    expect(init.body).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18" } });
    const session = String(init.headers["mcp-session-id"]);
    expect(session.length).toBeGreaterThan(20);
    const inSession = { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    // The session is this key's, on this endpoint only.
    const otherKey = await rawRequest(`${stack.api.url}/mcp`, {
      headers: { ...inSession, authorization: `Bearer ${alphaKey.key}` },
      body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
    });
    expect(otherKey.status).toBe(404);
    const otherEndpoint = await rawRequest(`${stack.api.url}/mcp/${alpha}`, {
      headers: inSession,
      body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
    });
    expect(otherEndpoint.status).toBe(404);
    const forged = await rawRequest(`${stack.api.url}/mcp`, {
      headers: { ...inSession, "mcp-session-id": `${session.slice(0, -4)}AAAA` },
      body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
    });
    expect(forged.status).toBe(404);
    // A JSON-only request without a session is answered on its own, as JSON.
    const list = await rawRequest(`${stack.api.url}/mcp/${alpha}`, {
      headers: { ...auth, accept: "application/json", "mcp-protocol-version": "2025-06-18" },
      body: { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} },
    });
    expect(list.status).toBe(200);
    expect(list.headers["content-type"]).toMatch(/application\/json/);
    expect(list.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "add",
      "echo",
      "fail",
      "slow",
    ]);
    // Without a session there is no GET stream and nothing to DELETE.
    for (const method of ["GET", "DELETE"]) {
      const refused = await rawRequest(`${stack.api.url}/mcp`, {
        method,
        headers: { ...auth, accept: "text/event-stream" },
      });
      expect(refused.status, method).toBe(405);
      expect(refused.headers.allow).toBe("POST");
    }
    // DELETE ends the session; it is then unknown.
    const ended = await rawRequest(`${stack.api.url}/mcp`, { method: "DELETE", headers: inSession });
    expect(ended.status).toBe(200);
    const after = await rawRequest(`${stack.api.url}/mcp`, {
      headers: inSession,
      body: { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} },
    });
    expect(after.status).toBe(404);
  });

  it("2026-07-28 callers: server/discover, stateless requests, GET and DELETE 405", async ({ expect }) => {
    const modern = {
      authorization: `Bearer ${fullKey.key}`,
      "mcp-protocol-version": "2026-07-28",
    };
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const discover = await rawRequest(`${stack.api.url}/mcp/${alpha}`, {
      headers: { ...modern, "mcp-method": "server/discover" },
      body: { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } },
    });
    expect(discover.status).toBe(200);
    expect(discover.headers["mcp-session-id"]).toBeUndefined();
    expect(discover.body.result).toMatchObject({
      supportedVersions: expect.arrayContaining(["2026-07-28"]),
      capabilities: { tools: {} },
    });
    const list = await rawRequest(`${stack.api.url}/mcp/${alpha}`, {
      headers: { ...modern, "mcp-method": "tools/list" },
      body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta } },
    });
    expect(list.status).toBe(200);
    expect(list.body.result).toMatchObject({ ttlMs: 1_000, cacheScope: "private" });
    expect(list.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "add",
      "echo",
      "fail",
      "slow",
    ]);
    // The routing headers are checked against the body.
    const mismatch = await rawRequest(`${stack.api.url}/mcp/${alpha}`, {
      headers: { ...modern, "mcp-method": "tools/call", "mcp-name": "add" },
      body: {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "echo", arguments: {}, _meta: meta },
      },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe(-32020);
    for (const method of ["GET", "DELETE"]) {
      const refused = await rawRequest(`${stack.api.url}/mcp`, {
        method,
        headers: { ...modern, accept: "text/event-stream" },
      });
      expect(refused.status, method).toBe(405);
    }
  });
});

describe("MCP endpoints on a loopback-only listener (Host checks)", () => {
  let stack: Stack;
  let key: CreatedKey;

  beforeAll(async () => {
    stack = await startGatewayStack({ mcp: { loopbackOnly: true } });
    key = await createKey(stack, "host checks");
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("a non-loopback Host (DNS rebinding) → 403; loopback Host names are accepted", async ({ expect }) => {
    const port = new URL(stack.api.url).port;
    const post = (host: string) =>
      rawRequest(`${stack.api.url}/mcp`, {
        headers: { authorization: `Bearer ${key.key}`, host },
        body: INITIALIZE,
      });
    for (const host of ["evil.example.com", `evil.example.com:${port}`, `127.0.0.1.evil.example:${port}`]) {
      const refused = await post(host);
      expect(refused.status, host).toBe(403);
      expect(refused.body).toMatchObject({ code: "auth.forbidden" });
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "localhost"]) {
      const accepted = await post(host);
      expect(accepted.status, host).toBe(200);
    }
    // The SDK client over 127.0.0.1 is unaffected.
    const mcp = await connectClient(`${stack.api.url}/mcp`, key.key);
    try {
      expect(await mcp.listTools()).toEqual({ tools: [] });
    } finally {
      await mcp.close();
    }
  });
});
