import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger } from "@mcpgw/core";
import { metricsForTest } from "@mcpgw/telemetry";
import { afterEach, describe, expect, it } from "vitest";
import { handleBatch } from "./handler";
import { runSweep } from "./sweep";

const logger = createLogger({ level: "error", sink: () => {} });
let recorded: ReturnType<typeof metricsForTest> | undefined;

afterEach(async () => {
  await recorded?.stop();
  recorded = undefined;
});

describe("the worker's metrics", () => {
  it("a sweep reads the queue's depth once, for mcpgw_queue_depth", async () => {
    recorded = metricsForTest();
    const store = createMemoryStore();
    for (let generation = 1; generation <= 3; generation++)
      await store.jobs.send({ type: "probe", serverId: "gone", generation });

    await runSweep({ store, logger });

    expect(await recorded.text()).toContain("mcpgw_queue_depth 3");
  });

  it("a job taken from a batch records how long it waited since SQS's SentTimestamp", async () => {
    recorded = metricsForTest();
    const store = createMemoryStore();
    const body = JSON.stringify({ type: "connect", serverId: "gone", generation: 1 });

    const fetch = () => Promise.reject(new Error("no network in unit tests"));
    await handleBatch({ store, logger, fetch }, [
      { messageId: "m-1", body, attributes: { SentTimestamp: String(Date.now() - 5_000) } },
      { messageId: "m-2", body },
    ]);

    const text = await recorded.text();
    expect(text).toContain('mcpgw_job_age_count{type="connect"} 1');
    const sum = Number(/mcpgw_job_age_sum\{type="connect"\} (\S+)/.exec(text)?.[1]);
    expect(sum).toBeGreaterThanOrEqual(5_000);
    expect(sum).toBeLessThan(60_000);
  });
});
