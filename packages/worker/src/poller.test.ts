import type { Store } from "@mcpgw/aws";
import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { linkedUpstream } from "@mcpgw/upstream/linked-upstream";
import { describe, expect, it } from "vitest";
import { handleBatch } from "./handler";
import { startPoller } from "./poller";
import type { WorkerDeps } from "./process-job";

/** Polls `check` until it holds (or fails after `timeoutMs`). */
async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function workerOver(store: Store) {
  const lines: Array<Record<string, unknown>> = [];
  const deps: WorkerDeps = {
    store,
    logger: createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) }),
    fetch: () => Promise.reject(new Error("no network in unit tests")),
    openSession: linkedUpstream(() => ({ tools: [] })).open,
  };
  return { deps, lines };
}

describe("the poller, through the job queue port", () => {
  it("receives a job, runs it and acknowledges it", async () => {
    const store = createMemoryStore();
    const { deps } = workerOver(store);
    const server = await store.servers.create(
      parseServerSpec({ name: "docs", url: "https://upstream.test/mcp" }),
    );
    const poller = startPoller(deps, { waitSeconds: 1, concurrency: 2 });
    try {
      await store.jobs.send({ type: "connect", serverId: server.id, generation: 1 });

      await eventually(async () => (await store.statuses.get(server.id))?.state === "connected");
      await eventually(() => store.jobs.pending().length === 0);
    } finally {
      await poller.stop();
    }
  });

  it("leaves a job that failed unacknowledged, for redelivery", async () => {
    const memory = createMemoryStore();
    const store: Store = {
      ...memory,
      statuses: { ...memory.statuses, get: () => Promise.reject(new Error("simulated table outage")) },
    };
    const { deps, lines } = workerOver(store);
    const poller = startPoller(deps, { waitSeconds: 1, concurrency: 1 });
    try {
      await memory.jobs.send({ type: "probe", serverId: "s-1", generation: 1 });

      await eventually(() => lines.some((line) => line.msg === "job failed"));
      expect(memory.jobs.pending()).toMatchObject([{ receiveCount: 1, job: { serverId: "s-1" } }]);
    } finally {
      await poller.stop();
    }
  });

  it("stops at once while long-polling", async () => {
    const { deps } = workerOver(createMemoryStore());
    const poller = startPoller(deps, { waitSeconds: 20 });
    await new Promise((resolve) => setTimeout(resolve, 20));

    const started = Date.now();
    await poller.stop();

    expect(Date.now() - started).toBeLessThan(500);
  });
});

describe("handleBatch", () => {
  it("drops malformed jobs as handled and reports only jobs that threw", async () => {
    const memory = createMemoryStore();
    const store: Store = {
      ...memory,
      statuses: { ...memory.statuses, get: () => Promise.reject(new Error("simulated table outage")) },
    };
    const { deps, lines } = workerOver(store);

    const response = await handleBatch(deps, [
      { messageId: "m-not-json", body: "not json" },
      { messageId: "m-extra", body: JSON.stringify({ type: "probe", serverId: "s", generation: 1, x: 1 }) },
      { messageId: "m-throws", body: JSON.stringify({ type: "connect", serverId: "s", generation: 1 }) },
    ]);

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-throws" }] });
    expect(lines.filter((l) => l.msg === "malformed job dropped").map((l) => l.messageId)).toEqual([
      "m-not-json",
      "m-extra",
    ]);
    expect(lines.find((l) => l.msg === "job failed")).toMatchObject({
      level: "error",
      messageId: "m-throws",
      errorMessage: "simulated table outage",
    });
  });
});
