import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { SessionPool } from "@mcpgw/upstream";
import { afterAll, describe, expect, it } from "vitest";
import { Directory, type DirectoryEntry } from "./directory";
import { McpEndpoints } from "./mcp-endpoint";
import type { McpCaller } from "./mcp-request";

const store = createMemoryStore();
const logger = createLogger({ level: "error", sink: () => {} });
const pool = new SessionPool();
const directory = new Directory(store, logger);
const endpoints = new McpEndpoints(
  { store, logger, directory, pool, fetch: globalThis.fetch },
  "unit-secret",
  logger,
);
afterAll(async () => {
  await endpoints.close();
  pool.close();
});

const caller: McpCaller = { principal: { kind: "admin" }, principalKey: "admin", scope: null };
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A stateless request to `/mcp` (or `/mcp/{endpoint}`): 2026-07-28 (with the envelope) or a sessionless 2025 one. */
function request(era: "modern" | "legacy", id: number, method = "tools/list", endpoint?: DirectoryEntry) {
  const body = { jsonrpc: "2.0", id, method, params: era === "modern" ? { _meta: meta } : {} };
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(era === "modern" ? { "mcp-protocol-version": "2026-07-28", "mcp-method": method } : {}),
  };
  const raw = new Request("http://127.0.0.1/mcp", { method: "POST", headers, body: JSON.stringify(body) });
  return endpoints.serve(raw, body, caller, endpoint).then((response) => response.text());
}

describe("McpEndpoints: SDK servers for stateless requests", () => {
  it("reuses one server from request to request, and makes only as many as run at once", async () => {
    for (let id = 1; id <= 5; id++) expect(await request("modern", id)).toContain('"tools":[]');
    expect(endpoints.serversMade).toBe(1);

    // A server that served a 2026 request serves 2026 ones only: the sessionless 2025 ones get their own.
    for (let id = 6; id <= 10; id++) expect(await request("legacy", id)).toContain('"tools":[]');
    expect(endpoints.serversMade).toBe(2);
    expect(await request("modern", 14)).toContain('"tools":[]');
    expect(endpoints.serversMade).toBe(2);

    await Promise.all([11, 12, 13].map((id) => request("modern", id)));
    expect(endpoints.serversMade).toBeLessThanOrEqual(4);
  });

  it("never hands on a server a sessionless initialize set up for its caller", async () => {
    const before = endpoints.serversMade;

    await request("legacy", 20, "initialize").catch(() => undefined);
    await request("legacy", 21);

    expect(endpoints.serversMade).toBe(before);
  });
});

describe("McpEndpoints: idle servers per face", () => {
  it("keeps one face per endpoint: an upstream whose instructions change on every probe adds no idle set", async () => {
    // Prepare: a connected server whose probes each report new instructions
    const server = await store.servers.create(
      parseServerSpec({ name: "nonce", url: "https://nonce.example/mcp" }),
    );
    const probe = async (generation: number) => {
      await store.statuses.recordAttempt(
        server.id,
        1,
        { ok: true, at: new Date().toISOString(), latencyMs: 1, toolCount: 0 },
        {
          tools: [],
          profile: {
            protocolVersion: "2026-07-28",
            capabilities: { tools: {} },
            instructions: `probe ${generation}`,
          },
        },
      );
      directory.invalidate();
    };
    const faces = endpoints.idleFaces;

    // Act
    for (let generation = 1; generation <= 5; generation++) {
      await probe(generation);
      const entry = (await directory.snapshot()).byName.get("nonce");
      expect(await request("modern", 100 + generation, "server/discover", entry)).toContain(
        `probe ${generation}`,
      );
    }

    // Assess: the latest face's servers are kept, none of the four before
    expect(endpoints.idleFaces).toBe(faces + 1);
  });
});
