import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, MAX_LISTING_AGE_MS, parseServerSpec, sweepDelaySeconds } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { runSweep } from "./sweep";

const logger = createLogger({ level: "error", sink: () => {} });

/** A memory store with `count` servers; the first `connected` are connected, their tools listed `listedAt`. */
async function servers(count: number, connected: number, listedAt = new Date().toISOString()) {
  const store = createMemoryStore();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const server = await store.servers.create(
      parseServerSpec({ name: `s-${i}`, url: "https://upstream.test/mcp" }),
    );
    ids.push(server.id);
    if (i < connected) {
      await store.statuses.recordAttempt(
        server.id,
        1,
        { ok: true, at: listedAt, latencyMs: 5, toolCount: 1 },
        { tools: [{ name: "echo", inputSchema: { type: "object" } }] },
      );
    }
  }
  return { store, ids };
}

describe("runSweep", () => {
  it("checks connected servers, spread over the interval by a stable offset of each", async () => {
    // Prepare
    const { store, ids } = await servers(30, 30);

    // Act
    const result = await runSweep({ store, logger }, { spreadSeconds: 60 });

    // Assess
    expect(result).toMatchObject({ checks: 30, probes: 0, reconnects: 0, repaired: 0 });
    const sent = store.jobs.pending();
    expect(sent.map((entry) => entry.job?.serverId).sort()).toEqual([...ids].sort());
    for (const { job, delaySeconds } of sent) {
      expect(job?.type).toBe("check");
      expect(delaySeconds).toBe(sweepDelaySeconds(job?.serverId ?? "", 60));
    }
    expect(new Set(sent.map((entry) => entry.delaySeconds)).size).toBeGreaterThan(10);
  });

  it("probes in full a connected server whose tools were listed too long ago", async () => {
    const listedAt = new Date(Date.now() - MAX_LISTING_AGE_MS).toISOString();
    const { store } = await servers(2, 2, listedAt);

    const result = await runSweep({ store, logger }, { spreadSeconds: 0 });

    expect(result).toMatchObject({ checks: 0, probes: 2 });
    expect(store.jobs.pending().map((entry) => [entry.job?.type, entry.delaySeconds])).toEqual([
      ["probe", 0],
      ["probe", 0],
    ]);
  });

  it("re-lists every connected server when told the listing age is 0, judging other ages as ever", async () => {
    const { store } = await servers(2, 1);

    const result = await runSweep({ store, logger }, { spreadSeconds: 0, maxListingAgeMs: 0 });

    expect(result).toMatchObject({ checks: 0, probes: 1, reconnects: 0 });
  });

  it("re-sends a lost connect job at once, never delayed", async () => {
    const { store, ids } = await servers(2, 1);

    const result = await runSweep({ store, logger }, { now: Date.now() + 10_000, spreadSeconds: 600 });

    expect(result).toMatchObject({ checks: 1, reconnects: 1 });
    expect(store.jobs.pending()).toContainEqual(
      expect.objectContaining({ delaySeconds: 0, job: { type: "connect", serverId: ids[1], generation: 1 } }),
    );
  });
});
