import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { recordFailure } from "@mcpgw/aws";
import { createLogger, type Job, parseServerSpec } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { processJob, type WorkerDeps } from "@mcpgw/worker";
import { describe, expect, it } from "vitest";
import { parkedPort } from "../../scripts/lib/processes";
import { createTestStore } from "../support/aws";

describe("one retry chain per server", () => {
  it("a retry overtaken by a later failure (another worker, a gateway call, a runner death) is dropped", async () => {
    const store = await createTestStore();
    const deps: WorkerDeps = {
      store,
      logger: createLogger({ sink: () => {} }),
      fetch: createGuardedFetch({ allowPrivate: true }),
    };
    const url = `http://127.0.0.1:${await parkedPort()}/mcp`;
    const server = await store.servers.create(parseServerSpec({ name: "chain", url }));
    const queueUrl = await store.jobs.url();
    const receive = async (): Promise<Job[]> => {
      const { Messages } = await store.clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      return (Messages ?? []).map((m) => JSON.parse(m.Body ?? "{}") as Job);
    };
    // Retries are delayed 15 s; this test reads them straight off the queue after a 0 s delay instead.
    const noDelay = { ...deps, retryDelaySeconds: 0 };

    expect(await processJob(noDelay, { type: "connect", serverId: server.id, generation: 1 }, "m1")).toBe(
      "failed",
    );
    const [firstRetry] = await receive();
    const later = new Date(Date.parse(firstRetry!.after!) + 1_000).toISOString();
    await recordFailure(
      store,
      server.id,
      1,
      { at: later, reason: "unreachable", error: "reset" },
      { retryDelaySeconds: 0 },
    );
    const [secondRetry] = await receive();

    const overtaken = await processJob(noDelay, firstRetry!, "r1");
    const owner = await processJob(noDelay, secondRetry!, "r2");

    expect(firstRetry).toMatchObject({ type: "retry", generation: 1, after: expect.any(String) });
    expect(secondRetry).toMatchObject({ type: "retry", after: later });
    expect(overtaken).toBe("dropped");
    expect(owner).toBe("failed");
  });
});
