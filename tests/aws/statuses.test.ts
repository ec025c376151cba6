import { createHash, randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { CatalogTooLargeError, createAwsClients, KINDS, keys } from "@mcpgw/aws";
import { parseServerSpec } from "@mcpgw/core";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestStore, scanTable } from "../support/aws";

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
    await store.statuses.recordAttempt(
      server.id,
      2,
      { ok: true, at: at(), latencyMs: 12, toolCount: 2 },
      {
        tools: [],
      },
    );

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
    await store.statuses.recordAttempt(server.id, 1, ok, {
      tools: [{ name: "one", inputSchema: { type: "object" } }],
    });
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
      { tools: [] },
    );

    expect(written).toBe(false);
    expect(await store.statuses.get(server.id)).toBeUndefined();
    expect(await store.statuses.getCatalog(server.id)).toBeUndefined();
    expect(await store.statuses.bump(server.id, "connecting")).toBeUndefined();
  });
});

describe("catalogues of any size", () => {
  const at = () => new Date().toISOString();
  const tools = (count: number, descriptionBytes: number) =>
    Array.from({ length: count }, (_, i) => ({
      name: `tool_${i}`,
      description: randomBytes(descriptionBytes / 2).toString("hex"),
      inputSchema: { type: "object" },
    }));

  it("stores one too large for an item in parts, reads it whole, and drops parts a smaller one no longer needs", async () => {
    const store = await createTestStore();
    const server = await store.servers.create(
      parseServerSpec({ name: "parts", url: "https://example.com/mcp" }),
    );
    const big = tools(3_000, 400); // ~1.2 MB of hex, ~650 KB gzipped: three parts
    const ok = (count: number) => ({ ok: true as const, at: at(), latencyMs: 1, toolCount: count });

    expect(await store.statuses.recordAttempt(server.id, 1, ok(big.length), { tools: big })).toBe(true);
    const stored = (await scanTable(store.config)).filter((item) => String(item.sk).startsWith("CATALOG"));
    expect(stored.length).toBeGreaterThan(1);
    expect((await store.statuses.getCatalog(server.id))?.tools).toEqual(big);
    expect((await store.statuses.listCatalogs()).find((c) => c.serverId === server.id)?.tools).toEqual(big);

    const small = tools(3, 10);
    expect(await store.statuses.recordAttempt(server.id, 1, ok(3), { tools: small })).toBe(true);
    const after = (await scanTable(store.config)).filter((item) => String(item.sk).startsWith("CATALOG"));
    expect(after).toHaveLength(1);
    expect((await store.statuses.getCatalog(server.id))?.tools).toEqual(small);
  });

  it("refuses one too large to store at all, saying how large (the probe records that as its failure)", async () => {
    const store = await createTestStore();
    const server = await store.servers.create(
      parseServerSpec({ name: "huge", url: "https://example.com/mcp" }),
    );
    const huge = tools(2_000, 4_000); // ~8 MB of hex: ~4.5 MB gzipped

    const refused = store.statuses.recordAttempt(
      server.id,
      1,
      { ok: true, at: at(), latencyMs: 1, toolCount: 2_000 },
      { tools: huge },
    );

    await expect(refused).rejects.toBeInstanceOf(CatalogTooLargeError);
    await expect(refused).rejects.toThrow(/^catalogue too large: 2000 tools, \d+ KB compressed/);
    expect((await store.statuses.get(server.id))?.state).toBe("connecting");
  });

  it("does not rewrite a catalogue whose content did not change", async () => {
    const store = await createTestStore();
    const server = await store.servers.create(
      parseServerSpec({ name: "same", url: "https://example.com/mcp" }),
    );
    const list = tools(5, 10);
    const ok = { ok: true as const, at: at(), latencyMs: 1, toolCount: 5 };
    await store.statuses.recordAttempt(server.id, 1, ok, { tools: list });
    const first = (await scanTable(store.config)).find((item) => item.sk === "CATALOG");

    await store.statuses.recordAttempt(server.id, 1, { ...ok, at: at() }, { tools: list });

    const second = (await scanTable(store.config)).find((item) => item.sk === "CATALOG");
    expect(second?.updatedAt).toBe(first?.updatedAt);
  });

  it("reads a catalogue stored before profiles were kept (a bare tools array), and rewrites it with one", async () => {
    const store = await createTestStore();
    const server = await store.servers.create(
      parseServerSpec({ name: "old", url: "https://example.com/mcp" }),
    );
    const list = tools(2, 10);
    const json = JSON.stringify(list);
    const { ddb } = createAwsClients(store.config);
    await ddb.send(
      new PutCommand({
        TableName: store.config.tableName,
        Item: {
          ...keys.serverCatalog(server.id),
          kind: KINDS.catalog,
          kindSort: server.id,
          serverId: server.id,
          updatedAt: "2026-01-01T00:00:00.000Z",
          hash: createHash("sha256").update(json).digest("base64url"),
          parts: 1,
          tools: gzipSync(json),
        },
      }),
    );

    const old = await store.statuses.getCatalog(server.id);
    const profile = { protocolVersion: "2025-11-25", capabilities: { tools: {} } };
    await store.statuses.recordAttempt(
      server.id,
      1,
      { ok: true, at: at(), latencyMs: 1, toolCount: 2 },
      {
        tools: list,
        profile,
      },
    );

    expect(old).toEqual({
      serverId: server.id,
      tools: list,
      updatedAt: "2026-01-01T00:00:00.000Z",
      hash: createHash("sha256").update(json).digest("base64url"),
    });
    expect((await store.statuses.listCatalogs()).find((c) => c.serverId === server.id)).toMatchObject({
      tools: list,
      profile,
    });
  });
});
