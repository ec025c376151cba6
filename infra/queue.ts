/**
 * The SQS job queue with its dead-letter queue; settings match packages/aws/src/bootstrap.ts.
 * Its consumer (the worker) and the scheduled sweep are in worker.ts.
 */

/** How often a job may be received before it moves to the dead-letter queue (MAX_RECEIVE_COUNT). */
const MAX_RECEIVE_COUNT = 5;

export const deadLetterQueue = new sst.aws.Queue("JobDeadLetterQueue", {
  transform: { queue: { messageRetentionSeconds: 14 * 24 * 60 * 60 } },
});

export const jobQueue = new sst.aws.Queue("JobQueue", {
  // Longer than one probe with its grace (10 s + 5 s) and than the worker's timeout (VISIBILITY_TIMEOUT_SECONDS).
  visibilityTimeout: "60 seconds",
  dlq: { queue: deadLetterQueue.arn, retry: MAX_RECEIVE_COUNT },
});

/** `Resource.Jobs.url`: enqueue only (the worker's receive/delete rights come with its subscription). */
export const jobsLink = new sst.Linkable("Jobs", {
  properties: { url: jobQueue.url },
  include: [sst.aws.permission({ actions: ["sqs:SendMessage"], resources: [jobQueue.arn] })],
});

/**
 * What `/readyz` asks of the queue (that it exists), and the sweep (its depth): its attributes, nothing
 * that moves messages.
 */
export const inspectJobQueue = { actions: ["sqs:GetQueueAttributes"], resources: [jobQueue.arn] };
