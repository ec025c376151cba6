import {
  GetQueueUrlCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Job } from "@mcpgw/core";

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
  return {
    url,
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
        throw new QueueError(`Could not enqueue a ${job.type} job`, { cause });
      }
    },
    async sendMany(jobs) {
      for (let start = 0; start < jobs.length; start += 10) {
        const batch = jobs.slice(start, start + 10);
        try {
          const result = await sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: await url(),
              Entries: batch.map((job, index) => ({ Id: String(index), MessageBody: JSON.stringify(job) })),
            }),
          );
          if (result.Failed && result.Failed.length > 0)
            throw new Error(`${result.Failed.length} jobs were refused`);
        } catch (cause) {
          throw new QueueError("Could not enqueue a batch of jobs", { cause });
        }
      }
    },
  };
}
