/**
 * Regression: with the emulator's resources gone, the poller and the sweep logged `QueueDoesNotExist`
 * / `ResourceNotFoundException` on every poll, forever. Now each missing resource is one clear line per
 * interval ("job queue … does not exist; waiting for it"), the poller pauses longer with each failed
 * receive instead of spinning, and picks up jobs again once the queue is back. Short intervals injected.
 */
import { createStore } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { handleBatch, startPoller, startSweeper, type WorkerDeps } from "@mcpgw/worker";
import { describe, expect, it } from "vitest";
import { createTestConfig, recordCommands, removeResource, restoreResource } from "../support/aws";
import { waitFor } from "../support/stack";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Worker deps over fresh resources whose outage log repeats a line every `intervalMs`. */
async function workerWithOutageInterval(intervalMs: number) {
  const config = await createTestConfig();
  const store = createStore(config, { outageLogIntervalMs: intervalMs });
  const lines: Array<Record<string, unknown>> = [];
  const deps: WorkerDeps = {
    store,
    logger: createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) }),
    fetch: createGuardedFetch({ allowPrivate: true }),
  };
  const messages = (level: string) => lines.filter((l) => l.level === level).map((l) => l.msg);
  return { config, store, deps, lines, messages };
}

describe("a missing job queue: the poller", () => {
  it("logs one line per interval, not one per poll, and pauses longer after each failure", async () => {
    // Prepare
    const { config, store, deps, messages } = await workerWithOutageInterval(500);
    await removeResource(config, "queue");
    const sent = recordCommands(store.clients);

    // Act
    const started = Date.now();
    const poller = startPoller(deps, { waitSeconds: 1, pauseMs: 100, maxPauseMs: 400 });
    await sleep(2_500);
    await poller.stop();
    const elapsed = Date.now() - started;

    // Assess: the lines
    const waiting = `job queue ${config.queueName} does not exist; waiting for it`;
    const errors = messages("error");
    expect(errors.every((msg) => msg === waiting)).toBe(true);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeLessThanOrEqual(Math.ceil(elapsed / 500) + 1);
    // The calls: rounds 100, 200, 400, 400… ms apart (each round one shared URL lookup), not a spin.
    const lookups = sent.filter((c) => c.command === "GetQueueUrlCommand").map((c) => c.at);
    const gaps = lookups.slice(1).map((at, i) => at - (lookups[i] as number));
    expect(lookups.length).toBeGreaterThan(errors.length);
    expect(lookups.length).toBeLessThanOrEqual(12);
    expect(gaps.slice(3).every((gap) => gap >= 350)).toBe(true);
  });

  it("takes jobs again once the queue is back and its pause is ended (wake)", async () => {
    // Prepare: the first failure pauses the poller for a minute
    const { config, store, deps, messages } = await workerWithOutageInterval(30_000);
    await removeResource(config, "queue");
    const poller = startPoller(deps, { waitSeconds: 1, pauseMs: 60_000 });
    try {
      await waitFor(
        async () => messages("error").length,
        (count) => count === 1,
        { timeoutMs: 5_000 },
      );

      // Act
      await restoreResource(config, "queue");
      await store.jobs.send({ type: "probe", serverId: "no-such-server", generation: 1 });
      poller.wake();

      // Assess: the job is received (and dropped: no such server), and the queue is logged as back
      await waitFor(
        async () => messages("debug"),
        (debug) => debug.includes("job dropped"),
        { timeoutMs: 5_000 },
      );
      expect(messages("info")).toContain(`job queue ${config.queueName} is back`);
      expect(messages("error")).toHaveLength(1);
    } finally {
      await poller.stop();
    }
  });

  it("stops at once even during a long pause", async () => {
    const { config, deps, messages } = await workerWithOutageInterval(30_000);
    await removeResource(config, "queue");
    const poller = startPoller(deps, { waitSeconds: 1, pauseMs: 60_000 });
    await waitFor(
      async () => messages("error").length,
      (count) => count === 1,
      { timeoutMs: 5_000 },
    );

    const started = Date.now();
    await poller.stop();

    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe("a missing table", () => {
  it("the sweep logs one line per interval, not one per sweep, and that it is back", async () => {
    // Prepare
    const { config, deps, messages } = await workerWithOutageInterval(400);
    await removeResource(config, "table");

    // Act: a sweep every 50 ms for 1.3 s, then the table back
    const started = Date.now();
    const sweeper = startSweeper(deps, 0.05);
    await sleep(1_300);
    const elapsed = Date.now() - started;
    await restoreResource(config, "table");
    await waitFor(
      async () => messages("info"),
      (info) => info.includes(`table ${config.tableName} is back`),
      { timeoutMs: 5_000 },
    );
    sweeper.stop();

    // Assess
    const errors = messages("error");
    expect(errors.every((msg) => msg === `table ${config.tableName} does not exist; waiting for it`)).toBe(
      true,
    );
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.length).toBeLessThanOrEqual(Math.ceil(elapsed / 400) + 1);
  });

  it("a batch of jobs fails as a whole (all redelivered) with one line, not one per job", async () => {
    const { config, deps, messages, lines } = await workerWithOutageInterval(30_000);
    await removeResource(config, "table");
    const records = Array.from({ length: 5 }, (_, i) => ({
      messageId: `m${i}`,
      body: JSON.stringify({ type: "connect", serverId: `s${i}`, generation: 1 }),
    }));

    const { batchItemFailures } = await handleBatch(deps, records);

    expect(batchItemFailures).toHaveLength(5);
    expect(messages("error")).toEqual([`table ${config.tableName} does not exist; waiting for it`]);
    const failed = lines.filter((l) => l.msg === "job failed");
    expect(failed.map((l) => l.messageId).sort()).toEqual(["m0", "m1", "m2", "m3", "m4"]);
    expect(failed.every((l) => l.level === "debug")).toBe(true);
  });
});
