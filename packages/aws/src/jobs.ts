import {
  GetQueueUrlCommand,
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

/** Producer of worker jobs on the SQS job queue. */
export interface JobQueue {
  /** Sends one job, delayed by `delaySeconds` (0–900). */
  send(job: Job, delaySeconds?: number): Promise<void>;
  /** Sends many jobs in batches of 10. */
  sendMany(jobs: Job[]): Promise<void>;
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
): JobQueue {
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
  /** A send failed: when the queue is gone, its URL is resolved again next time. */
  const sendFailed = (cause: unknown) => {
    if (outageOf(cause)) forgetUrl();
  };
  async function sendBatch(queueUrl: string, batch: Job[]): Promise<void> {
    try {
      const result = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((job, index) => ({ Id: String(index), MessageBody: JSON.stringify(job) })),
        }),
      );
      if (result.Failed && result.Failed.length > 0)
        throw new Error(`${result.Failed.length} jobs were refused`);
    } catch (cause) {
      sendFailed(cause);
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
        sendFailed(cause);
        throw new QueueError(`Could not enqueue a ${job.type} job`, { cause });
      }
    },
    async sendMany(jobs) {
      const batches: Job[][] = [];
      for (let start = 0; start < jobs.length; start += 10) batches.push(jobs.slice(start, start + 10));
      const queueUrl = await url();
      // A few batches in flight at once: a 200-server sweep is 20 round trips, not 20 in a row.
      for (let start = 0; start < batches.length; start += SEND_CONCURRENCY) {
        await Promise.all(
          batches.slice(start, start + SEND_CONCURRENCY).map((batch) => sendBatch(queueUrl, batch)),
        );
      }
    },
  };
}
