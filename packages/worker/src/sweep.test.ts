import { createMemoryStore } from "@mcpgw/aws/memory";
import {
  createLogger,
  MAX_JOB_DELAY_SECONDS,
  MAX_LISTING_AGE_MS,
  parseServerSpec,
  sweepDelaySeconds,
} from "@mcpgw/core";
import { PROBE_DEADLINE_MS } from "@mcpgw/upstream";
import { describe, expect, it } from "vitest";
import { OUTER_GRACE_MS } from "./attempt";
import { LOST_JOB_GRACE_MS, runSweep, STALE_ATTEMPT_MS } from "./sweep";

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

const failed = (at: string) => ({ ok: false as const, at, reason: "unreachable" as const, error: "refused" });

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

    const result = await runSweep(
      { store, logger },
      { now: Date.now() + LOST_JOB_GRACE_MS + 1_000, spreadSeconds: 600 },
    );

    expect(result).toMatchObject({ checks: 1, reconnects: 1 });
    expect(store.jobs.pending()).toContainEqual(
      expect.objectContaining({ delaySeconds: 0, job: { type: "connect", serverId: ids[1], generation: 1 } }),
    );
  });

  it("deems a connect job lost only past one whole attempt (deadline + grace + margin): a slow first connect is not sent twice", async () => {
    const { store } = await servers(1, 0);

    const result = await runSweep(
      { store, logger },
      { now: Date.now() + PROBE_DEADLINE_MS + OUTER_GRACE_MS, spreadSeconds: 0 },
    );

    expect(LOST_JOB_GRACE_MS).toBeGreaterThan(PROBE_DEADLINE_MS + OUTER_GRACE_MS);
    expect(result).toMatchObject({ reconnects: 0, probes: 0 });
    expect(store.jobs.pending()).toEqual([]);
  });

  it("respects a failed server's backoff: no probe before its nextAttemptAt (+ the stale margin), one after", async () => {
    const { store, ids } = await servers(1, 0);
    const at = new Date().toISOString();
    const nextAttemptAt = new Date(Date.now() + 300_000).toISOString();
    await store.statuses.recordAttempt(ids[0] as string, 1, failed(at), undefined, {
      backoff: { failureCount: 6, nextAttemptAt },
    });

    const waiting = await runSweep({ store, logger }, { now: Date.now() + 120_000, spreadSeconds: 0 });
    const lost = await runSweep(
      { store, logger },
      { now: Date.now() + 300_000 + STALE_ATTEMPT_MS, spreadSeconds: 0 },
    );

    expect(waiting).toMatchObject({ probes: 0, reconnects: 0 });
    expect(lost).toMatchObject({ probes: 1 });
  });

  it("does not let a stored nextAttemptAt far past any real backoff stall a failed server", async () => {
    const { store, ids } = await servers(1, 0);
    const at = new Date().toISOString();
    const nextAttemptAt = new Date(Date.now() + 30 * 24 * 3600_000).toISOString(); // a month out
    await store.statuses.recordAttempt(ids[0] as string, 1, failed(at), undefined, {
      backoff: { failureCount: 6, nextAttemptAt },
    });

    const lost = await runSweep(
      { store, logger },
      { now: Date.now() + MAX_JOB_DELAY_SECONDS * 1000 + STALE_ATTEMPT_MS, spreadSeconds: 0 },
    );

    expect(lost).toMatchObject({ probes: 1 });
  });

  it("deletes the leases of a stdio runner that died, and no live runner's", async () => {
    // Prepare
    const { store } = await servers(0, 0);
    const now = Date.now();
    const registration = (id: string, aliveUntil: number) => ({
      id,
      url: `http://127.0.0.1:1/${id}`,
      capacity: 4,
      free: 4,
      version: "test",
      aliveUntil,
      draining: false,
    });
    await store.fleet.announce(registration("live", now + 15_000));
    await store.fleet.announce(registration("crashed", now + 15_000));
    await store.fleet.claim("kept", "live", now);
    await store.fleet.claim("left", "crashed", now);
    await store.fleet.announce(registration("crashed", now - 1));

    // Act
    const result = await runSweep({ store, logger }, { now });

    // Assess
    expect(result.reapedLeases).toBe(1);
    expect(await store.fleet.leasesOf("crashed")).toEqual([]);
    expect(await store.fleet.lease("kept")).toMatchObject({ owner: "live" });
  });

  it("begins no run while the last one's jobs are still to come: a second within its spread does nothing", async () => {
    // Prepare: a run whose checks are due over the next minute
    const { store } = await servers(5, 5);
    await runSweep({ store, logger }, { spreadSeconds: 60 });

    // Act
    const again = await runSweep({ store, logger }, { spreadSeconds: 60 });

    // Assess
    expect(again).toMatchObject({ skipped: "running", checks: 0, probes: 0 });
    expect(store.jobs.pending()).toHaveLength(5);
  });

  it("skips while the last run's jobs wait in the queue, and runs again once the workers took them", async () => {
    // Prepare: a run whose 30 checks are all due now and none taken yet
    const { store } = await servers(30, 30);
    await runSweep({ store, logger }, { spreadSeconds: 0 });

    // Act
    const behind = await runSweep({ store, logger }, { spreadSeconds: 0 });
    const taken = [];
    for (
      let batch = await store.jobs.receive({ max: 10 });
      batch.length > 0;
      batch = await store.jobs.receive({ max: 10 })
    )
      taken.push(...batch);
    await store.jobs.ack(taken.map((job) => job.receipt));
    const caughtUp = await runSweep({ store, logger }, { spreadSeconds: 0 });

    // Assess
    expect(behind).toMatchObject({ skipped: "backlog", checks: 0 });
    expect(taken).toHaveLength(30);
    expect(caughtUp.skipped).toBeUndefined();
    expect(caughtUp.checks).toBe(30);
  });

  it("runs once when two schedulers fire together", async () => {
    // Prepare
    const { store } = await servers(4, 4);

    // Act
    const results = await Promise.all([
      runSweep({ store, logger }, { spreadSeconds: 60 }),
      runSweep({ store, logger }, { spreadSeconds: 60 }),
    ]);

    // Assess
    expect(results.filter((result) => result.skipped === undefined)).toHaveLength(1);
    expect(store.jobs.pending()).toHaveLength(4);
  });

  it("holds no longer than its crash bound when a run never recorded its end", async () => {
    // Prepare: a run that began and died (its record holds for 50 ms)
    const { store } = await servers(2, 2);
    const last = await store.sweeps.last();
    expect(last).toBeUndefined();
    await store.sweeps.begin(
      { token: "died", startedAt: Date.now(), holdsUntil: Date.now() + 50, jobs: 0 },
      undefined,
      60_000,
    );

    // Act
    const held = await runSweep({ store, logger }, { spreadSeconds: 0 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const after = await runSweep({ store, logger }, { spreadSeconds: 0 });

    // Assess
    expect(held.skipped).toBe("running");
    expect(after).toMatchObject({ checks: 2 });
    expect(after.skipped).toBeUndefined();
  });

  it("is not stopped by a hold further out than any run asks for (a writer's clock far ahead)", async () => {
    // Prepare
    const { store } = await servers(2, 2);
    const now = Date.now();
    await store.sweeps.begin(
      { token: "skewed", startedAt: now, holdsUntil: now + 86_400_000, jobs: 0 },
      undefined,
      0,
    );

    // Act
    const result = await runSweep({ store, logger }, { spreadSeconds: 0 });

    // Assess
    expect(result.skipped).toBeUndefined();
    expect(result.checks).toBe(2);
  });

  it("holds after a run whose sending failed partway: the jobs it handed over are still to come", async () => {
    // Prepare: a queue that takes the jobs, then fails
    const { store } = await servers(3, 3);
    const sendMany = store.jobs.sendMany.bind(store.jobs);
    store.jobs.sendMany = async (jobs, delay) => {
      await sendMany(jobs, delay);
      throw new Error("the last batch was not sent");
    };

    // Act
    await expect(runSweep({ store, logger }, { spreadSeconds: 60 })).rejects.toThrow("not sent");
    const again = await runSweep({ store, logger }, { spreadSeconds: 60 });

    // Assess
    expect(again.skipped).toBe("running");
    expect(await store.sweeps.last()).toMatchObject({ jobs: 3 });
  });
});
