/**
 * Connection lifecycle — a good upstream: create → `connected` with the right tool count and a latency,
 * and `GET /v1/servers/{id}/tools` lists the catalogue. SDK-written upstreams (streamable HTTP stateful
 * and stateless/JSON, legacy SSE only, paginated tools/list) and the published server-everything.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack } from "../support/stack";
import { createServer, settled, uniqueName } from "./helpers";

interface ToolView {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

describe.concurrent("connection lifecycle: catalogue of a good upstream", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];
  let everything: Everything | undefined;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
    await everything?.stop();
  });

  async function upstream(options: Parameters<typeof startUpstream>[0]): Promise<Upstream> {
    const started = await startUpstream(options);
    upstreams.push(started);
    return started;
  }

  async function toolsOf(id: string): Promise<ToolView[]> {
    const response = await stack.call("GET", `/v1/servers/${id}/tools`);
    if (response.status !== 200) throw new Error(`tools → ${response.status}`);
    return response.body.tools as ToolView[];
  }

  it("SDK upstream (stateful, SSE responses) → connected, 4 tools, a latency; tools listed", async ({
    expect,
  }) => {
    const up = await upstream({});
    const created = await stack.call("POST", "/v1/servers", { name: uniqueName("sdk"), url: up.url });
    expect(created.status).toBe(201);
    expect(created.body.status.state).toBe("connecting");

    const status = await settled(stack, created.body.id);
    expect(status).toMatchObject({ state: "connected", reason: null, error: null, toolCount: 4 });
    expect(status.lastConnectionLatencyMs).toEqual(expect.any(Number));
    expect(status.lastConnectionLatencyMs).toBeGreaterThanOrEqual(0);
    expect(status.lastConnectionLatencyMs).toBeLessThan(10_000);
    expect(Date.parse(status.lastConnectionAttemptAt ?? "")).not.toBeNaN();
    expect(Date.parse(status.lastSuccessfulConnectionAt ?? "")).not.toBeNaN();

    const tools = await toolsOf(created.body.id);
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "echo", "fail", "slow"]);
    const echo = tools.find((t) => t.name === "echo");
    expect(echo).toMatchObject({ description: "Echo the given text", inputSchema: { type: "object" } });
    expect(echo?.inputSchema).toHaveProperty("properties.text");
  });

  it("SDK upstream (stateless, JSON responses) → connected, 4 tools", async ({ expect }) => {
    const up = await upstream({ stateless: true, jsonResponse: true });
    const id = await createServer(stack, { name: uniqueName("stateless"), url: up.url });
    expect(await settled(stack, id)).toMatchObject({ state: "connected", toolCount: 4 });
    expect((await toolsOf(id)).length).toBe(4);
  });

  it("legacy-SSE-only upstream → connected through the fallback", async ({ expect }) => {
    const up = await upstream({ legacySse: true });
    // The fixture really refuses streamable HTTP: a POST to /mcp is answered 405.
    const probe = await fetch(up.url, { method: "POST", body: "{}" });
    expect(probe.status).toBe(405);
    up.resetCounters();

    const id = await createServer(stack, { name: uniqueName("legacy"), url: up.url });
    const status = await settled(stack, id);
    expect(status).toMatchObject({ state: "connected", reason: null, toolCount: 4 });
    expect(status.lastConnectionLatencyMs).toBeGreaterThanOrEqual(0);
    expect((await toolsOf(id)).map((t) => t.name).sort()).toEqual(["add", "echo", "fail", "slow"]);
    // Refused POST /mcp, then GET /mcp (SSE stream) and POSTs to /messages.
    expect(up.requests).toBeGreaterThanOrEqual(3);
  });

  it("paginated tools/list (pageSize 5, 16 tools) → toolCount counts every page", async ({ expect }) => {
    const up = await upstream({ pageSize: 5, extraTools: 12 });
    const id = await createServer(stack, { name: uniqueName("paged"), url: up.url });
    expect(await settled(stack, id)).toMatchObject({ state: "connected", toolCount: 16 });
    const names = (await toolsOf(id)).map((t) => t.name).sort();
    expect(names).toHaveLength(16);
    expect(new Set(names).size).toBe(16);
    expect(names).toEqual(expect.arrayContaining(["add", "echo", "fail", "slow", "tool_000", "tool_011"]));
  });

  it("published server-everything (streamable HTTP) → connected with the tool count an SDK client lists", async ({
    expect,
  }) => {
    everything = await startEverything();

    // What an SDK client declaring the gateway's capabilities sees directly, over every page
    // (server-everything offers its elicitation, sampling and roots tools only to such a client).
    const client = new Client(
      { name: "lifecycle-test", version: "1.0.0" },
      { capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    const direct: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      direct.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor);
    await client.close();
    expect(direct.length).toBeGreaterThan(5);

    const id = await createServer(stack, { name: uniqueName("everything"), url: everything.url });
    const status = await settled(stack, id);
    expect(status, everything.output()).toMatchObject({
      state: "connected",
      reason: null,
      toolCount: direct.length,
    });
    expect(status.lastConnectionLatencyMs).toBeGreaterThanOrEqual(0);
    const tools = await toolsOf(id);
    expect(tools.map((t) => t.name).sort()).toEqual([...direct].sort());
    for (const tool of tools) expect(tool.inputSchema).toMatchObject({ type: "object" });
  });
});
