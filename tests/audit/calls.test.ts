/**
 * Every tool call is one audit event, through every plane: REST, `/mcp`, `/mcp/{server}` (a stdio
 * server, through the runner), `/mcp/sets/{name}`, the console's try-it, and an OAuth user — each with
 * its principal (key id and name, user subject, admin), plane, outcome and argument key names, and no
 * value: sentinels planted in arguments, a server's header and a stdio server's env appear nowhere in
 * the events or the export. Refusals (unknown tool, out of scope) are events too.
 */
import type { AuditEvent } from "@mcpgw/core";
import { startTracing, type Tracing } from "@mcpgw/telemetry";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { startRunnerStack, TINY_STDIO } from "../runner/helpers";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { signedInClient } from "../support/oauth-client";
import { createServer, reaches, uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

const ARG = "SENTINEL-ARG-5b1e0c";
const HEADER = "SENTINEL-HEADER-7d2f9a";
const ENV = "SENTINEL-ENV-3c8a41";

type RunnerStack = Awaited<ReturnType<typeof startRunnerStack>>;

describe("audit events of tool calls", () => {
  let stack: RunnerStack;
  let upstream: Upstream;
  const http = uniqueName("files");
  const stdio = uniqueName("local");
  const set = uniqueName("set");
  let httpId: string;
  let stdioId: string;
  let key: { id: string; name: string; key: string };
  let narrow: { id: string; name: string; key: string };
  const clients: Array<{ close(): Promise<void> }> = [];
  let since: string;
  let tracing: Tracing;

  beforeAll(async () => {
    // As every process does: each call then runs in a trace, which its event names.
    tracing = startTracing({ service: "gateway", env: {} });
    stack = await startRunnerStack({}, { oauth: true });
    upstream = await startUpstream({ name: http });
    httpId = await createServer(stack, { name: http, url: upstream.url, headers: { "x-api-key": HEADER } });
    stdioId = await createServer(stack, {
      name: stdio,
      command: process.execPath,
      args: [TINY_STDIO],
      env: { PLANTED: ENV },
    });
    await reaches(stack, httpId, "connected");
    await reaches(stack, stdioId, "connected");
    await waitFor(
      () => stack.call("GET", "/v1/tools"),
      (r) =>
        [http, stdio].every((name) =>
          r.body.tools.some((t: { name: string }) => t.name.startsWith(`${name}__`)),
        ),
      { timeoutMs: 10_000 },
    );
    key = (await stack.call("POST", "/v1/keys", { name: "audit-ci" })).body;
    narrow = (await stack.call("POST", "/v1/keys", { name: "audit-narrow", servers: [stdio] })).body;
    expect((await stack.call("POST", "/v1/toolsets", { name: set, tools: [`${http}__echo`] })).status).toBe(
      201,
    );
    expect((await stack.call("PUT", "/v1/access/user:ada", { servers: null })).status).toBe(200);
    since = new Date().toISOString();
  }, 90_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await upstream?.close();
    await stack?.cleanup();
    await tracing?.shutdown();
  });

  const mcpClient = async (path: string, token: string) => {
    const client = new Client({ name: "audit-e2e", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  };

  it("one event per call, through each plane, with its principal, outcome and key names — and no value", async () => {
    const rest = stack.callAs(key.key);
    expect((await rest("POST", `/v1/tools/${http}__echo/call`, { arguments: { text: ARG } })).status).toBe(
      200,
    );
    expect((await rest("POST", `/v1/tools/${http}__fail/call`, { arguments: {} })).body.isError).toBe(true);
    expect((await rest("POST", `/v1/tools/${http}__nope/call`, { arguments: { q: ARG } })).body.code).toBe(
      "tool.not_found",
    );
    const refused = await stack.callAs(narrow.key)("POST", `/v1/tools/${http}__echo/call`, {
      arguments: { text: ARG },
    });
    expect(refused.body.code).toBe("server.not_found");

    const aggregate = await mcpClient("/mcp", key.key);
    expect(
      (await aggregate.callTool({ name: `${http}__echo`, arguments: { text: ARG } })).isError,
    ).toBeFalsy();
    await expect(
      aggregate.callTool({ name: `${http}__missing`, arguments: { text: ARG } }),
    ).rejects.toThrow();
    const own = await mcpClient(`/mcp/${stdio}`, key.key);
    const pong = await own.callTool({ name: "ping", arguments: { note: ARG } });
    expect(pong.content).toEqual([{ type: "text", text: "pong" }]);
    const toolset = await mcpClient(`/mcp/sets/${set}`, key.key);
    expect((await toolset.callTool({ name: `${http}__echo`, arguments: { text: ARG } })).isError).toBeFalsy();

    // The console's try-it: the admin signed in to the console (cookie and CSRF token).
    const signed = await fetch(`${stack.api.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
    });
    const cookie = (signed.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const { csrfToken } = (await signed.json()) as { csrfToken: string };
    const tried = await fetch(`${stack.api.url}/v1/tools/${stdio}__ping/call`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrfToken, "content-type": "application/json" },
      body: JSON.stringify({ arguments: { probe: ARG } }),
    });
    expect(tried.status).toBe(200);

    const { client: user } = await signedInClient(stack.api.url, new URL(`${stack.api.url}/mcp`), "ada");
    clients.push(user);
    expect((await user.callTool({ name: `${http}__echo`, arguments: { text: ARG } })).isError).toBeFalsy();

    await stack.audit.flush();
    const listed = await stack.call("GET", `/v1/audit?since=${since}&limit=500`);
    expect(listed.status).toBe(200);
    const events = (listed.body.events as AuditEvent[]).filter((event) => event.type === "call").reverse();
    const asKey = { kind: "key", keyId: key.id, keyName: "audit-ci" };
    const summary = events.map((e) => ({
      principal: e.principal,
      plane: e.plane,
      server: e.serverName,
      tool: e.tool,
      outcome: e.outcome,
      keys: e.argumentKeys,
      ...(e.toolset ? { toolset: e.toolset } : {}),
    }));
    expect(summary).toEqual([
      { principal: asKey, plane: "rest", server: http, tool: "echo", outcome: "ok", keys: ["text"] },
      { principal: asKey, plane: "rest", server: http, tool: "fail", outcome: "tool_error", keys: [] },
      { principal: asKey, plane: "rest", server: http, tool: "nope", outcome: "tool.not_found", keys: ["q"] },
      {
        principal: { kind: "key", keyId: narrow.id, keyName: "audit-narrow" },
        plane: "rest",
        server: http,
        tool: "echo",
        outcome: "server.not_found",
        keys: ["text"],
      },
      { principal: asKey, plane: "mcp", server: http, tool: "echo", outcome: "ok", keys: ["text"] },
      {
        principal: asKey,
        plane: "mcp",
        server: http,
        tool: "missing",
        outcome: "tool.not_found",
        keys: ["text"],
      },
      { principal: asKey, plane: "mcp_server", server: stdio, tool: "ping", outcome: "ok", keys: ["note"] },
      {
        principal: asKey,
        plane: "mcp_set",
        server: http,
        tool: "echo",
        outcome: "ok",
        keys: ["text"],
        toolset: set,
      },
      {
        principal: { kind: "admin" },
        plane: "console",
        server: stdio,
        tool: "ping",
        outcome: "ok",
        keys: ["probe"],
      },
      {
        principal: expect.objectContaining({ kind: "user" }),
        plane: "mcp",
        server: http,
        tool: "echo",
        outcome: "ok",
        keys: ["text"],
      },
    ]);
    expect(JSON.stringify(events[9]?.principal)).toContain("ada");

    for (const event of events) {
      expect(event.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(event.source).toMatch(/^(127\.0\.0\.1|::ffff:127\.0\.0\.1|::1)$/);
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
      expect(event.requestBytes).toBeGreaterThan(0);
    }
    const answered = events.filter((e) => e.outcome === "ok" || e.outcome === "tool_error");
    for (const event of answered) expect(event.responseBytes).toBeGreaterThan(0);
    // Resolved calls name the server's id too; the refusals what the caller named.
    expect(events.filter((e) => e.serverId === httpId).length).toBeGreaterThanOrEqual(5);
    expect(events.filter((e) => e.serverId === stdioId)).toHaveLength(2);

    const exported = await fetch(`${stack.api.url}/v1/audit/export?since=${since}`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const text = await exported.text();
    expect(text.split("\n").filter(Boolean)).toHaveLength(listed.body.events.length);
    for (const sentinel of [ARG, HEADER, ENV]) {
      expect(JSON.stringify(listed.body)).not.toContain(sentinel);
      expect(text).not.toContain(sentinel);
    }
  }, 60_000);

  it("an event names the trace of its call: a client's valid traceparent is kept", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const response = await fetch(`${stack.api.url}/v1/tools/${http}__echo/call`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key.key}`,
        "content-type": "application/json",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ arguments: { text: "traced" } }),
    });
    expect(response.status).toBe(200);
    await stack.audit.flush();
    const listed = await stack.call("GET", `/v1/audit?since=${since}&principal=${key.id}&limit=1`);
    expect(listed.body.events[0]).toMatchObject({ plane: "rest", tool: "echo", traceId });
  });

  it("filters by server name and id alike, through the server's own index", async () => {
    await stack.audit.flush();
    const byName = await stack.call("GET", `/v1/audit?since=${since}&server=${stdio}`);
    const byId = await stack.call("GET", `/v1/audit?since=${since}&server=${stdioId}`);
    expect(byName.body.events.length).toBe(2);
    expect(byId.body).toEqual(byName.body);
    const byTool = await stack.call("GET", `/v1/audit?since=${since}&tool=${stdio}__ping`);
    expect(byTool.body.events.map((e: AuditEvent) => e.plane).sort()).toEqual(["console", "mcp_server"]);
    const byKey = await stack.call(
      "GET",
      `/v1/audit?since=${since}&principal=audit-narrow&outcome=server.not_found`,
    );
    expect(byKey.body.events).toHaveLength(1);
  });

  it("a call refused by its caller's rate limit is one event too (REST and MCP)", async () => {
    const limited = async (name: string) =>
      (await stack.call("POST", "/v1/keys", { name, rateLimit: { perMinute: 1, burst: 1 } })).body as {
        id: string;
        key: string;
      };
    const [restKey, mcpKey] = [await limited("audit-rest-limited"), await limited("audit-mcp-limited")];
    const rest = stack.callAs(restKey.key);
    expect((await rest("POST", `/v1/tools/${http}__echo/call`, { arguments: { text: ARG } })).status).toBe(
      200,
    );
    const refused = await rest("POST", `/v1/tools/${http}__echo/call`, { arguments: { text: ARG } });
    expect([refused.status, refused.body.code]).toEqual([429, "rate_limited"]);

    const rpc = (body: unknown) =>
      fetch(`${stack.api.url}/mcp/${stdio}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${mcpKey.key}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(body),
      });
    // The one request of the minute is a ping; the call after it is refused.
    await (await rpc({ jsonrpc: "2.0", id: 1, method: "ping" })).text();
    const call = { name: "ping", arguments: { note: ARG } };
    const mcpRefused = await rpc({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
    // The request's JSON-RPC error is its answer (HTTP 200), the gateway's code in `data.code`.
    expect(JSON.parse(await mcpRefused.text())).toMatchObject({
      id: 2,
      error: { data: { code: "rate_limited" } },
    });

    await stack.audit.flush();
    const of = async (principal: string) =>
      (await stack.call("GET", `/v1/audit?since=${since}&principal=${principal}`)).body
        .events as AuditEvent[];
    expect((await of(restKey.id)).map((e) => [e.plane, e.tool, e.outcome, e.argumentKeys])).toEqual([
      ["rest", "echo", "rate_limited", undefined],
      ["rest", "echo", "ok", ["text"]],
    ]);
    expect(
      (await of(mcpKey.id)).map((e) => [e.plane, e.serverName, e.tool, e.outcome, e.argumentKeys]),
    ).toEqual([["mcp_server", stdio, "ping", "rate_limited", ["note"]]]);
  });

  it("calls refused or failed before their server resolved are found under the server, in the list and the stats", async () => {
    await stack.audit.flush();
    const of = async (server: string) =>
      (
        (await stack.call("GET", `/v1/audit?since=${since}&server=${server}&limit=500`)).body
          .events as AuditEvent[]
      )
        .filter((e) => e.type === "call")
        .map((e) => [e.plane, e.tool, e.outcome, e.serverId]);
    const byName = await of(http);
    expect(byName).toEqual(
      expect.arrayContaining([
        ["rest", "nope", "tool.not_found", httpId],
        ["rest", "echo", "server.not_found", httpId],
        ["mcp", "missing", "tool.not_found", httpId],
        ["rest", "echo", "rate_limited", httpId],
      ]),
    );
    expect(await of(httpId)).toEqual(byName);
    expect(await of(stdio)).toEqual(
      expect.arrayContaining([["mcp_server", "ping", "rate_limited", stdioId]]),
    );
    const stats = await stack.call("GET", `/v1/audit/stats?server=${http}&window=hour`);
    // The tool's own failure and the four above are the server's errors.
    expect(stats.body.totals).toMatchObject({ calls: byName.length, errors: expect.any(Number) });
    expect(stats.body.totals.errors).toBeGreaterThanOrEqual(5);
  });
});
