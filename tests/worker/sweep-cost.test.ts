/**
 * Sweeps cost what changed. A sweep of a connected server whose tools were listed lately enqueues a
 * liveness check — a 2026 upstream is asked `server/discover` alone, a 2025 one `initialize` and
 * `ping` — which writes nothing while nothing changed but its point in the server's latency history (an
 * item of its own, one UpdateItem: the one write every check makes); the tools are listed again (and the catalogue
 * rewritten only if its content changed) once the listing is `MAX_LISTING_AGE_MS` old or the server's
 * profile changed; a server gone is marked failed at once; and the sweep's jobs spread over its
 * interval by SQS delays. AWS calls are counted on the store's own clients (against the emulator);
 * upstream requests on the worker's fetch.
 */
import type { AwsStore } from "@mcpgw/aws";
import { createLogger, type Job, MAX_LISTING_AGE_MS, parseServerSpec, sweepDelaySeconds } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { type JobOutcome, processJob, runSweep, type WorkerDeps } from "@mcpgw/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type ModernUpstream, startModernUpstream } from "../fixtures/modern-upstream";
import { createTestStore } from "../support/aws";
import { type AwsCallLog, recordAwsCalls } from "../support/aws-calls";

const logger = createLogger({ level: "error", sink: () => {} });

/** A store of its own, a worker whose fetch records the JSON-RPC methods it sends, and a call log. */
async function setup() {
  const store = (await createTestStore()) as AwsStore;
  const methods: string[] = [];
  const guarded = createGuardedFetch({ allowPrivate: true });
  const recording: typeof fetch = (input, init) => {
    if (typeof init?.body === "string") {
      for (const message of [JSON.parse(init.body)].flat()) if (message?.method) methods.push(message.method);
    }
    return guarded(input, init);
  };
  const deps: WorkerDeps = { store, logger, fetch: recording };
  return { store, deps, methods, calls: recordAwsCalls(store.clients) };
}

/** A server connected by its first (full) probe, with a sealed header as most have. */
async function connected(deps: WorkerDeps, url: string, spec: Record<string, unknown> = {}): Promise<string> {
  const server = await deps.store.servers.create(
    parseServerSpec({
      name: `srv-${Math.random().toString(36).slice(2, 8)}`,
      url,
      headers: { "X-Key": "k" },
      ...spec,
    }),
  );
  expect(await processJob(deps, { type: "connect", serverId: server.id, generation: 1 }, "connect-1")).toBe(
    "connected",
  );
  return server.id;
}

/** One sweep (its jobs not spread), then every job it enqueued through the worker, as the poller would. */
async function sweepAndWork(deps: WorkerDeps, now = Date.now()): Promise<JobOutcome[]> {
  await runSweep({ store: deps.store, logger }, { now, spreadSeconds: 0 });
  const outcomes: JobOutcome[] = [];
  for (;;) {
    const received = await deps.store.jobs.receive({ max: 10, waitSeconds: 0 });
    if (received.length === 0) return outcomes;
    for (const { messageId, body } of received)
      outcomes.push(await processJob(deps, JSON.parse(body) as Job, messageId));
    await deps.store.jobs.ack(received.map((job) => job.receipt));
  }
}

/**
 * What the calls wrote, by item: status items, catalogue items (head and parts), and latency-history
 * rings (every attempt's point: one write of its own per check or probe). The sweep run's own record
 * (`SWEEP`: its begin and its end, two writes per run whatever the count of servers) is not a server's.
 */
function written(calls: AwsCallLog) {
  const writes = calls.writes().filter((write) => write.pk !== "SWEEP");
  return {
    status: writes.filter((write) => write.sk === "STATUS").length,
    catalog: writes.filter((write) => write.sk.startsWith("CATALOG")).length,
    history: writes.filter((write) => write.pk.startsWith("LATENCY#")).length,
    all: writes.length,
  };
}

describe("sweep of connected servers: cost what changed", () => {
  let upstream: Upstream;
  let modern: ModernUpstream;
  const extra: Upstream[] = [];

  beforeAll(async () => {
    [upstream, modern] = await Promise.all([startUpstream(), startModernUpstream()]);
  });
  afterAll(async () => {
    await Promise.all([upstream?.close(), modern?.close(), ...extra.map((u) => u.close())]);
  });

  it("a sweep of an unchanged connected server (2025): initialize + ping, 0 catalogue writes, 0 status writes, its latency point the one write", async () => {
    // Prepare
    const { deps, methods, calls } = await setup();
    const id = await connected(deps, upstream.url);
    const before = await deps.store.statuses.get(id);
    calls.reset();
    methods.length = 0;

    // Act
    const outcomes = await sweepAndWork(deps);

    // Assess
    console.log("sweep of an unchanged 2025 server:", calls.summary(), "upstream:", methods);
    expect(outcomes).toEqual(["alive"]);
    expect(methods).not.toContain("tools/list");
    expect(methods).toContain("ping");
    expect(written(calls)).toEqual({ status: 0, catalog: 0, history: 1, all: 1 });
    expect(calls.writes().filter((write) => write.pk === "SWEEP")).toHaveLength(2);
    expect(await deps.store.statuses.get(id)).toEqual(before);
  });

  it("a sweep of an unchanged connected 2026 server: server/discover and a 2025 initialize (refused), nothing written but its latency point", async () => {
    const { deps, calls } = await setup();
    await connected(deps, modern.url);
    calls.reset();
    modern.resetCounters();

    const outcomes = await sweepAndWork(deps);

    console.log("sweep of an unchanged 2026 server:", calls.summary(), "upstream:", modern.methods);
    expect(outcomes).toEqual(["alive"]);
    expect(modern.methods).toEqual({ "server/discover": 1 });
    // The probe asks whether it speaks 2025 too: one initialize, refused (no SSE fallback after it).
    expect(modern.legacyRefused).toBe(1);
    expect(written(calls)).toEqual({ status: 0, catalog: 0, history: 1, all: 1 });
  });

  it("past the listing age the sweep lists the tools again: unchanged → 1 status write, 0 catalogue writes (+ its latency point)", async () => {
    const { deps, methods, calls } = await setup();
    const id = await connected(deps, upstream.url);
    const catalog = await deps.store.statuses.getCatalog(id);
    calls.reset();
    methods.length = 0;

    const outcomes = await sweepAndWork(deps, Date.now() + MAX_LISTING_AGE_MS);

    console.log("re-list of an unchanged server:", calls.summary());
    expect(outcomes).toEqual(["connected"]);
    expect(methods).toContain("tools/list");
    expect(written(calls)).toEqual({ status: 1, catalog: 0, history: 1, all: 2 });
    expect(await deps.store.statuses.getCatalog(id)).toEqual(catalog);
  });

  it("a tool added without list_changed: checks leave the catalogue alone; the aged re-list rewrites it", async () => {
    const { deps, calls } = await setup();
    const own = await startUpstream();
    extra.push(own);
    // Pinning `auto`: the re-listed tool is served at once (under `approve` it would wait for an admin).
    const id = await connected(deps, own.url, { pinning: "auto" });
    own.addTool("added_tool");
    const names = async () => (await deps.store.statuses.getCatalog(id))?.tools.map((t) => t.name).sort();

    calls.reset();
    expect(await sweepAndWork(deps)).toEqual(["alive"]);
    const afterCheck = { names: await names(), written: written(calls) };
    calls.reset();
    expect(await sweepAndWork(deps, Date.now() + MAX_LISTING_AGE_MS)).toEqual(["connected"]);

    expect(afterCheck).toEqual({
      names: ["add", "echo", "fail", "slow"],
      written: { status: 0, catalog: 0, history: 1, all: 1 },
    });
    expect(await names()).toEqual(["add", "added_tool", "echo", "fail", "slow"]);
    expect(written(calls)).toEqual({ status: 1, catalog: 1, history: 1, all: 3 });
    expect(await deps.store.statuses.get(id)).toMatchObject({ state: "connected", toolCount: 5 });
  });

  it("a server upgraded in place (its serverInfo changed): the check lists the tools again", async () => {
    const { deps, calls, methods } = await setup();
    const own = await startUpstream({ name: "before-upgrade" });
    const id = await connected(deps, own.url);
    await own.close();
    const upgraded = await startUpstream({ port: own.port, name: "after-upgrade" });
    extra.push(upgraded);
    calls.reset();
    methods.length = 0;

    expect(await sweepAndWork(deps)).toEqual(["connected"]);

    expect(methods).toContain("tools/list");
    expect((await deps.store.statuses.getCatalog(id))?.profile?.serverInfo).toMatchObject({
      name: "after-upgrade",
    });
    expect(written(calls)).toEqual({ status: 1, catalog: 1, history: 1, all: 3 });
  });

  it("the check of a server gone marks it failed at once (1 status write, + its latency point) and schedules its retry", async () => {
    const { deps, calls } = await setup();
    const own = await startUpstream();
    const id = await connected(deps, own.url);
    await own.close();
    calls.reset();

    expect(await sweepAndWork(deps)).toEqual(["failed"]);

    expect(written(calls)).toEqual({ status: 1, catalog: 0, history: 1, all: 2 });
    expect(await deps.store.statuses.get(id)).toMatchObject({ state: "failed", reason: "unreachable" });
    const retries = calls.calls.filter((call) => call.command === "SendMessage");
    expect(
      retries.map((call) => [JSON.parse(String(call.input.MessageBody)).type, call.input.DelaySeconds]),
    ).toEqual([["retry", 15]]);
  });

  it("a sweep spreads its checks over the interval: each server's job is delayed by its own offset", async () => {
    // Prepare: 20 connected servers, their tools listed just now
    const { store, calls } = await setup();
    for (let i = 0; i < 20; i++) {
      const server = await store.servers.create(
        parseServerSpec({ name: `spread-${i}`, url: "https://example.com/mcp" }),
      );
      await store.statuses.recordAttempt(
        server.id,
        1,
        { ok: true, at: new Date().toISOString(), latencyMs: 1, toolCount: 0 },
        { tools: [] },
      );
    }
    calls.reset();

    // Act
    const result = await runSweep({ store, logger }, { spreadSeconds: 60 });
    const visibleNow = await store.jobs.receive({ max: 10, waitSeconds: 0 });

    // Assess: SendMessageBatch entries carry each server's delay; SQS holds the delayed ones back
    expect(result.checks).toBe(20);
    const entries = calls.calls
      .filter((call) => call.command === "SendMessageBatch")
      .flatMap((call) => call.input.Entries as Array<{ MessageBody: string; DelaySeconds: number }>);
    const delays = entries.map((entry) => {
      const job = JSON.parse(entry.MessageBody) as Job;
      expect(entry.DelaySeconds).toBe(sweepDelaySeconds(job.serverId, 60));
      return entry.DelaySeconds;
    });
    expect(delays).toHaveLength(20);
    expect(new Set(delays).size).toBeGreaterThan(10);
    expect(Math.max(...delays)).toBeLessThan(60);
    expect(visibleNow.length).toBe(delays.filter((delay) => delay === 0).length);
  });
});
