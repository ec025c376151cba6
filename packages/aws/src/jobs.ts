import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Job } from "@mcpgw/core";
import { outageOf } from "./outages";

const SEND_CONCURRENCY = 5;

/** Enqueuing a job failed. */
export class QueueError extends Error {
  override readonly name = "QueueError";
}

/** A job as received: its message id, its body (not yet parsed) and the receipt that acknowledges it. */
export interface ReceivedJob {
  messageId: string;
  body: string;
  receipt: string;
  /** When it was sent (SQS's SentTimestamp, epoch ms), when the queue said. */
  sentAt?: number;
}

/** What a receive asks for: at most `max` jobs (1–10), waiting up to `waitSeconds` for the first. */
export interface ReceiveOptions {
  max?: number;
  waitSeconds?: number;
  signal?: AbortSignal;
}

/**
 * The worker jobs' queue: producers send; a consumer (the local poller) receives and acknowledges. A
 * received job stays hidden from other receives until acknowledged, or until its visibility timeout
 * passes and it is delivered again (at least once).
 */
export interface JobQueue {
  /** Sends one job, delayed by `delaySeconds` (0–900). */
  send(job: Job, delaySeconds?: number): Promise<void>;
  /** Sends many jobs in batches of 10, each delayed by `delaySeconds(job)` (0–900; default none). */
  sendMany(jobs: Job[], delaySeconds?: (job: Job) => number): Promise<void>;
  /** Jobs visible now, up to `max`; waits (long-polls) up to `waitSeconds` while there are none. */
  receive(options?: ReceiveOptions): Promise<ReceivedJob[]>;
  /** Deletes handled jobs by their receipts. */
  ack(receipts: string[]): Promise<void>;
  /** Jobs waiting now (ApproximateNumberOfMessages: visible, not yet taken). */
  depth(): Promise<number>;
}

/** The job queue on SQS, with the URL it resolves by name (for the readiness check and the bootstrap). */
export interface SqsJobQueue extends JobQueue {
  /** The queue URL (resolved once, never built by hand). */
  url(): Promise<string>;
  /**
   * Forgets a URL resolved by name, so the next use resolves it again — for when the queue was found
   * missing (a re-created queue may have another URL). A linked URL (SST) is kept.
   */
  forgetUrl(): void;
}

/** A producer for the queue named `queueName`, or at `queueUrl` when it is known (SST link). */
export function createJobQueue(
  sqs: SQSClient,
  queue: { queueName: string; queueUrl?: string | undefined },
): SqsJobQueue {
  let resolved: Promise<string> | undefined = queue.queueUrl ? Promise.resolve(queue.queueUrl) : undefined;
  const url = () => {
    resolved ??= sqs.send(new GetQueueUrlCommand({ QueueName: queue.queueName })).then(({ QueueUrl }) => {
      if (!QueueUrl) throw new QueueError(`Queue ${queue.queueName} has no URL`);
      return QueueUrl;
    });
    resolved.catch(() => {
      resolved = undefined;
    });
    return resolved;
  };
  const forgetUrl = () => {
    if (!queue.queueUrl) resolved = undefined;
  };
  /** A call failed: when the queue is gone, its URL is resolved again next time. */
  const callFailed = (cause: unknown) => {
    if (outageOf(cause)) forgetUrl();
  };
  async function sendBatch(
    queueUrl: string,
    batch: Job[],
    delaySeconds?: (job: Job) => number,
  ): Promise<void> {
    try {
      const result = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((job, index) => ({
            Id: String(index),
            MessageBody: JSON.stringify(job),
            ...(delaySeconds ? { DelaySeconds: delaySeconds(job) } : {}),
          })),
        }),
      );
      if (result.Failed && result.Failed.length > 0)
        throw new Error(`${result.Failed.length} jobs were refused`);
    } catch (cause) {
      callFailed(cause);
      throw new QueueError("Could not enqueue a batch of jobs", { cause });
    }
  }

  return {
    url,
    forgetUrl,
    async send(job, delaySeconds = 0) {
      try {
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: await url(),
            MessageBody: JSON.stringify(job),
            DelaySeconds: delaySeconds,
          }),
        );
      } catch (cause) {
        callFailed(cause);
        throw new QueueError(`Could not enqueue a ${job.type} job`, { cause });
      }
    },
    async receive(options = {}) {
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: await url(),
            MaxNumberOfMessages: options.max ?? 10,
            WaitTimeSeconds: options.waitSeconds ?? 0,
            MessageSystemAttributeNames: ["SentTimestamp"],
          }),
          { abortSignal: options.signal },
        );
        return (received.Messages ?? []).flatMap(({ MessageId, ReceiptHandle, Body, Attributes }) => {
          if (!MessageId || !ReceiptHandle) return [];
          const sentAt = Number(Attributes?.SentTimestamp);
          return [
            {
              messageId: MessageId,
              body: Body ?? "",
              receipt: ReceiptHandle,
              ...(Number.isFinite(sentAt) ? { sentAt } : {}),
            },
          ];
        });
      } catch (cause) {
        // Thrown as it is: the caller's outage log reads the SDK's error.
        callFailed(cause);
        throw cause;
      }
    },
    async ack(receipts) {
      if (receipts.length === 0) return;
      try {
        const queueUrl = await url();
        for (let start = 0; start < receipts.length; start += 10) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: receipts
                .slice(start, start + 10)
                .map((ReceiptHandle, index) => ({ Id: String(index), ReceiptHandle })),
            }),
          );
        }
      } catch (cause) {
        callFailed(cause);
        throw cause;
      }
    },
    async depth() {
      try {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: await url(),
            AttributeNames: ["ApproximateNumberOfMessages"],
          }),
        );
        return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
      } catch (cause) {
        callFailed(cause);
        throw cause;
      }
    },
    async sendMany(jobs, delaySeconds) {
      const batches: Job[][] = [];
      for (let start = 0; start < jobs.length; start += 10) batches.push(jobs.slice(start, start + 10));
      const queueUrl = await url();
      // A few batches in flight at once: a 200-server sweep is 20 round trips, not 20 in a row.
      for (let start = 0; start < batches.length; start += SEND_CONCURRENCY) {
        await Promise.all(
          batches
            .slice(start, start + SEND_CONCURRENCY)
            .map((batch) => sendBatch(queueUrl, batch, delaySeconds)),
        );
      }
    },
  };
}
