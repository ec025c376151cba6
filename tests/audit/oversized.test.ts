/**
 * One caller's oversized names cannot cost other callers their events: a tool name near the MCP
 * body limit, called through `/mcp/sets/{name}` (an unknown tool, refused), is recorded clipped, and
 * the normal call written in the same batch is recorded too.
 */
import type { AuditEvent } from "@mcpgw/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createServer, reaches, uniqueName } from "../support/servers";
import { type Stack, startStack } from "../support/stack";

describe("an oversized tool name in the audit trail", () => {
  let stack: Stack;
  let upstream: Upstream;
  let client: Client | undefined;
  const http = uniqueName("files");
  const set = uniqueName("set");

  beforeAll(async () => {
    // Written only when the test flushes: both calls' events go in one batch.
    stack = await startStack({ audit: { flushMs: 60_000 } });
    upstream = await startUpstream({ name: http });
    const id = await createServer(stack, { name: http, url: upstream.url });
    await reaches(stack, id, "connected");
    expect((await stack.call("POST", "/v1/toolsets", { name: set, tools: [`${http}__echo`] })).status).toBe(
      201,
    );
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await upstream?.close();
    await stack?.stop();
  });

  it("is recorded clipped, and the call after it in the same batch is recorded too", async () => {
    const since = new Date().toISOString();
    const key = (await stack.call("POST", "/v1/keys", { name: uniqueName("big") })).body;
    client = new Client({ name: "audit-oversized", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp/sets/${set}`), {
        requestInit: { headers: { authorization: `Bearer ${key.key}` } },
      }),
    );
    // Over DynamoDB's 400 KB item limit, within the MCP body limit (1 MiB).
    await expect(client.callTool({ name: "x".repeat(600_000), arguments: {} })).rejects.toThrow();
    expect((await client.callTool({ name: `${http}__echo`, arguments: { text: "hi" } })).isError).toBeFalsy();
    await stack.audit.flush();

    const { body } = await stack.call("GET", `/v1/audit?since=${since}&principal=${key.id}`);
    const events = body.events as AuditEvent[];
    expect(events.map((e) => [e.plane, e.toolset, e.outcome])).toEqual([
      ["mcp_set", set, "ok"],
      ["mcp_set", set, expect.stringMatching(/not_found/)],
    ]);
    expect(events[1]?.tool).toHaveLength(128);
    expect(stack.audit.status()).toMatchObject({ state: "ok", failed: 0 });
  });
});
