import { parseServerSpec } from "@mcpgw/core";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestStore } from "../support/aws";

describe("status repository: the generation fence", () => {
  let store: Awaited<ReturnType<typeof createTestStore>>;
  beforeAll(async () => {
    store = await createTestStore();
  });

  const at = () => new Date().toISOString();

  it("rejects a stale generation write and leaves the newer status intact", async () => {
    const server = await store.servers.create(
      parseServerSpec({ name: "fenced", url: "https://example.com/mcp" }),
    );
    const bumped = await store.statuses.bump(server.id, "connecting");
    expect(bumped?.generation).toBe(2);
    await store.statuses.recordAttempt(server.id, 2, { ok: true, at: at(), latencyMs: 12, toolCount: 2 }, []);

    const stale = await store.statuses.recordAttempt(server.id, 1, {
      ok: false,
      at: at(),
      reason: "unreachable",
      error: "late",
    });

    expect(stale).toBe(false);
    expect(await store.statuses.get(server.id)).toMatchObject({
      state: "connected",
      toolCount: 2,
      lastConnectionLatencyMs: 12,
      lastError: null,
      generation: 2,
    });
  });

  it("keeps earlier diagnostics across attempts and replaces the catalogue with a success", async () => {
    const server = await store.servers.create(
      parseServerSpec({ name: "diag", url: "https://example.com/mcp" }),
    );
    const ok = { ok: true as const, at: "2026-01-01T00:00:00.000Z", latencyMs: 5, toolCount: 1 };
    await store.statuses.recordAttempt(server.id, 1, ok, [{ name: "one", inputSchema: { type: "object" } }]);
    await store.statuses.recordAttempt(server.id, 1, {
      ok: false,
      at: "2026-01-01T00:01:00.000Z",
      reason: "failed",
      error: "HTTP 500",
    });

    const status = await store.statuses.get(server.id);
    const catalog = await store.statuses.getCatalog(server.id);

    expect(status).toMatchObject({
      state: "failed",
      reason: "failed",
      lastSuccessfulConnectionAt: ok.at,
      lastConnectionFailureAt: "2026-01-01T00:01:00.000Z",
      lastConnectionLatencyMs: 5,
      lastError: "HTTP 500",
    });
    expect(catalog?.tools.map((t) => t.name)).toEqual(["one"]);
  });

  it("a write for a deleted server is fenced off and resurrects nothing", async () => {
    const server = await store.servers.create(
      parseServerSpec({ name: "gone", url: "https://example.com/mcp" }),
    );
    await store.servers.remove(server.id);

    const written = await store.statuses.recordAttempt(
      server.id,
      1,
      { ok: true, at: at(), latencyMs: 1, toolCount: 0 },
      [],
    );

    expect(written).toBe(false);
    expect(await store.statuses.get(server.id)).toBeUndefined();
    expect(await store.statuses.getCatalog(server.id)).toBeUndefined();
    expect(await store.statuses.bump(server.id, "connecting")).toBeUndefined();
  });
});
