/**
 * Connection lifecycle — the SQS job consumer: malformed jobs are logged and dropped (reported as
 * success, so SQS never redelivers them); a job whose processing throws is a partial batch failure;
 * on the real queue a job that keeps failing lands in the dead-letter queue after maxReceiveCount.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { createJobQueue, MAX_RECEIVE_COUNT } from "@mcpgw/aws";
import { createLogger, type Job } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { handleBatch, startPoller, type WorkerDeps } from "@mcpgw/worker";
import { afterAll, beforeAll, describe, it } from "vitest";
import { createTestStore } from "../support/aws";
import { type Stack, startStack, waitFor } from "../support/stack";
import { logLines } from "./helpers";

type TestStore = Awaited<ReturnType<typeof createTestStore>>;

/** Worker deps whose status reads fail, like a table outage: every job throws. */
function failingDeps(store: TestStore, logs: string[], queueUrl?: string): WorkerDeps {
  return {
    store: {
      ...store,
      statuses: {
        ...store.statuses,
        get: () => Promise.reject(new Error("simulated table outage")),
      },
      ...(queueUrl
        ? { jobs: createJobQueue(store.clients.sqs, { queueName: store.config.queueName, queueUrl }) }
        : {}),
    },
    logger: createLogger({ level: "debug", sink: (line) => logs.push(line) }),
    fetch: createGuardedFetch({ allowPrivate: true }),
  };
}

describe.concurrent("connection lifecycle: job consumer", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("malformed jobs are dropped and reported as success (no batchItemFailures)", async ({ expect }) => {
    const records = [
      { messageId: "m-not-json", body: "not json" },
      { messageId: "m-bogus", body: JSON.stringify({ type: "bogus" }) },
      { messageId: "m-no-generation", body: JSON.stringify({ type: "connect", serverId: "s-1" }) },
      {
        messageId: "m-extra-field",
        body: JSON.stringify({ type: "probe", serverId: "s-1", generation: 1, extra: true }),
      },
      { messageId: "m-empty", body: "" },
    ];
    const response = await handleBatch(stack.worker, records);
    expect(response).toEqual({ batchItemFailures: [] });
    const dropped = logLines(stack)
      .filter((l) => l.msg === "malformed job dropped")
      .map((l) => l.messageId);
    expect(dropped).toEqual(expect.arrayContaining(records.map((r) => r.messageId)));
  });

  it("a malformed message on the real queue is consumed once and deleted, not redelivered", async ({
    expect,
  }) => {
    const { sqs } = stack.store.clients;
    const queueUrl = await stack.store.jobs.url();
    const sent = await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "not json either" }),
    );
    await waitFor(
      async () =>
        logLines(stack).filter((l) => l.msg === "malformed job dropped" && l.messageId === sent.MessageId),
      (lines) => lines.length > 0,
      { timeoutMs: 10_000 },
    );
    // Deleted by the poller: nothing left in flight or waiting.
    const attributes = await waitFor(
      async () =>
        (
          await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: queueUrl,
              AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
            }),
          )
        ).Attributes ?? {},
      (a) => a.ApproximateNumberOfMessagesNotVisible === "0",
      { timeoutMs: 5_000 },
    );
    expect(attributes.ApproximateNumberOfMessages).toBe("0");
    expect(
      logLines(stack).filter((l) => l.msg === "malformed job dropped" && l.messageId === sent.MessageId),
    ).toHaveLength(1);
  });

  it("a job whose processing throws is reported in batchItemFailures (and only that one)", async ({
    expect,
  }) => {
    const store = await createTestStore();
    const logs: string[] = [];
    const deps = failingDeps(store, logs);
    const job: Job = { type: "connect", serverId: "any-server", generation: 1 };
    const response = await handleBatch(deps, [
      { messageId: "m-throws", body: JSON.stringify(job) },
      { messageId: "m-malformed", body: "{" },
    ]);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: "m-throws" }] });
    const failed = logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "job failed");
    expect(failed).toEqual([
      expect.objectContaining({
        messageId: "m-throws",
        serverId: "any-server",
        errorMessage: "simulated table outage",
      }),
    ]);
  });

  it("a job that keeps failing lands in the dead-letter queue after maxReceiveCount receives", async ({
    expect,
  }) => {
    const store = await createTestStore();
    const { sqs } = store.clients;
    const suffix = Math.random().toString(36).slice(2, 8);
    // A queue pair of the test's own, like the real one but with a 1 s visibility timeout.
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `test-dlq-fast-${suffix}` }));
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }))
    ).Attributes?.QueueArn;
    const main = await sqs.send(
      new CreateQueueCommand({
        QueueName: `test-jobs-fast-${suffix}`,
        Attributes: {
          VisibilityTimeout: "1",
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: MAX_RECEIVE_COUNT }),
        },
      }),
    );
    const queueUrl = main.QueueUrl as string;
    const logs: string[] = [];
    // The real poller and handler, consuming the test's queue with a worker whose every job throws.
    const poller = startPoller(failingDeps(store, logs, queueUrl), { waitSeconds: 1, concurrency: 1 });
    try {
      const job: Job = { type: "retry", serverId: "doomed", generation: 3 };
      const sent = await sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }),
      );

      const deadLettered = await waitFor(
        async () =>
          (
            await sqs.send(
              new ReceiveMessageCommand({
                QueueUrl: dlq.QueueUrl,
                WaitTimeSeconds: 1,
                MaxNumberOfMessages: 10,
              }),
            )
          ).Messages ?? [],
        (messages) => messages.length > 0,
        { timeoutMs: 15_000, intervalMs: 0 },
      );
      expect(deadLettered).toHaveLength(1);
      expect(deadLettered[0]?.MessageId).toBe(sent.MessageId);
      expect(JSON.parse(deadLettered[0]?.Body ?? "")).toEqual(job);
      const attempts = logs
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === "job failed" && l.messageId === sent.MessageId);
      expect(attempts).toHaveLength(MAX_RECEIVE_COUNT);
    } finally {
      await poller.stop();
      await Promise.all([
        sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })),
        sqs.send(new DeleteQueueCommand({ QueueUrl: dlq.QueueUrl })),
      ]);
    }
  });
});
