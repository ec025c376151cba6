import { DeleteMessageBatchCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { errorFields } from "@mcpgw/core";
import { handleBatch } from "./handler";
import type { WorkerDeps } from "./process-job";

export interface PollerOptions {
  /** Receive loops running at once; each handles up to 10 jobs in parallel. */
  concurrency?: number;
  /** Long-poll wait per receive (1–20 s). */
  waitSeconds?: number;
}

/** A running local poller. */
export interface Poller {
  stop(): Promise<void>;
}

/**
 * The local stand-in for Lambda's SQS trigger: long-polls the job queue and feeds batches to the
 * same `handleBatch` the Lambda runs, deleting what succeeded (failures reappear after the
 * visibility timeout, and go to the dead-letter queue after maxReceiveCount).
 */
export function startPoller(deps: WorkerDeps, options: PollerOptions = {}): Poller {
  const { sqs } = deps.store.clients;
  const controller = new AbortController();
  const waitSeconds = options.waitSeconds ?? 5;

  async function loop(): Promise<void> {
    while (!controller.signal.aborted) {
      try {
        const queueUrl = await deps.store.jobs.url();
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: waitSeconds,
          }),
          { abortSignal: controller.signal },
        );
        const messages = (received.Messages ?? []).filter((m) => m.MessageId && m.ReceiptHandle);
        if (messages.length === 0) continue;
        const records = messages.map((m) => ({ messageId: m.MessageId as string, body: m.Body ?? "" }));
        const { batchItemFailures } = await handleBatch(deps, records);
        const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
        const done = messages.filter((m) => !failed.has(m.MessageId as string));
        if (done.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
            }),
          );
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        deps.logger.error("poller receive failed", errorFields(error));
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  const loops = Array.from({ length: options.concurrency ?? 4 }, () => loop());
  return {
    async stop() {
      controller.abort();
      await Promise.allSettled(loops);
    },
  };
}
