import { beginSpan, errorFields, errorTypeOf, Job, SpanKind } from "@mcpgw/core";
import { recordJobAge } from "@mcpgw/telemetry";
import { processJob, type WorkerDeps } from "./process-job";

/** The parts of an SQS record the worker reads (the Lambda event shape). */
export interface SqsRecord {
  messageId: string;
  body: string;
  /** SQS's system attributes; SentTimestamp (epoch ms, as a string) dates the job. */
  attributes?: { SentTimestamp?: string };
}

/** Lambda's partial batch response: only these messages are retried. */
export interface BatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/**
 * Handles an SQS batch: each record in parallel; a malformed job is logged and dropped (never
 * retried forever); a job that throws is reported as a partial failure, so SQS redelivers it and,
 * after maxReceiveCount, moves it to the dead-letter queue.
 */
export async function handleBatch(deps: WorkerDeps, records: SqsRecord[]): Promise<BatchResponse> {
  const failures = await Promise.all(
    records.map(async (record) => {
      const job = parseJob(record.body);
      if (!job) {
        deps.logger.warn("malformed job dropped", { messageId: record.messageId });
        return undefined;
      }
      const sentAt = Number(record.attributes?.SentTimestamp);
      if (Number.isFinite(sentAt)) recordJobAge(job.type, Date.now() - sentAt);
      // Each job (a probe, a check) is a trace of its own: its span, then the upstream requests it makes.
      const span = beginSpan(`job ${job.type}`, {
        kind: SpanKind.CONSUMER,
        attributes: { "mcpgw.job.type": job.type, "mcpgw.server.id": job.serverId },
      });
      try {
        const outcome = await span.run(() => processJob(deps, job, record.messageId));
        span.end({ "mcpgw.job.outcome": outcome });
        return undefined;
      } catch (error) {
        span.end(undefined, errorTypeOf(error));
        const fields = { messageId: record.messageId, serverId: job.serverId, ...errorFields(error) };
        // A missing table or key is logged once per interval, not once per job.
        if (deps.store.outages.report(deps.logger, error)) deps.logger.debug("job failed", fields);
        else deps.logger.error("job failed", fields);
        return { itemIdentifier: record.messageId };
      }
    }),
  );
  return { batchItemFailures: failures.filter((failure) => failure !== undefined) };
}

function parseJob(body: string): Job | undefined {
  try {
    const parsed = Job.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
