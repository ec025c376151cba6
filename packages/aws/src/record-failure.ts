import { type CredentialOutcome, type FailureReason, RETRY_DELAY_SECONDS } from "@mcpgw/core";
import type { JobQueue } from "./jobs";
import type { StatusRepository } from "./statuses";

/** A failed attempt to record: when it started, why it failed, its (scrubbed) error text. */
export interface Failure extends CredentialOutcome {
  at: string;
  reason: FailureReason;
  error: string;
}

/**
 * Records a failure under the generation fence and, when it was written, schedules the retry that
 * continues this server's one retry chain: the retry carries the attempt's time (`after`), so an
 * older retry overtaken by this attempt is dropped. True when the failure was recorded.
 */
export async function recordFailure(
  store: { statuses: StatusRepository; jobs: JobQueue },
  serverId: string,
  generation: number,
  failure: Failure,
  options: { jobId?: string; retryDelaySeconds?: number } = {},
): Promise<boolean> {
  const written = await store.statuses.recordAttempt(
    serverId,
    generation,
    { ok: false, ...failure },
    undefined,
    options.jobId ? { jobId: options.jobId } : {},
  );
  if (written) {
    await store.jobs.send(
      { type: "retry", serverId, generation, after: failure.at },
      options.retryDelaySeconds ?? RETRY_DELAY_SECONDS,
    );
  }
  return written;
}
