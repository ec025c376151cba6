import {
  type BackoffOptions,
  type CredentialOutcome,
  type FailureReason,
  failureCountAfter,
  retryDelaySeconds,
} from "@mcpgw/core";
import type { JobQueue } from "./jobs";
import type { StatusRepository } from "./statuses";

/** A failed attempt to record: when it started, why it failed, its (scrubbed) error text. */
export interface Failure extends CredentialOutcome {
  at: string;
  reason: FailureReason;
  error: string;
  /** Trying again with nothing changed cannot help (e.g. a catalogue too large): the retry waits the cap. */
  deterministic?: boolean;
  /** Its stdio runner was lost: recorded as `connecting` (it moves to another runner), `lastError` saying so. */
  moving?: boolean;
}

/** How a recorded failure is written and its retry spaced. */
export interface RecordFailureOptions {
  jobId?: string;
  /** The first retry's delay (default 15 s); later ones back off from it (see {@link retryDelaySeconds}). */
  retryDelaySeconds?: number;
  /** The longest delay (default 5 min). */
  maxRetryDelaySeconds?: number;
  /** The attempt held its generation's claim: the record ends it. */
  endsClaim?: boolean;
}

/**
 * Records a failure under the generation fence and, when it was written, schedules the retry that
 * continues this server's one retry chain: the retry carries the attempt's time (`after`), so an
 * older retry overtaken by this attempt is dropped. Repeated failures back off (the status counts them
 * and shows when the retry comes, `nextAttemptAt`); a deterministic one waits the cap. True when the
 * failure was recorded.
 */
export async function recordFailure(
  store: { statuses: StatusRepository; jobs: JobQueue },
  serverId: string,
  generation: number,
  { deterministic, ...failure }: Failure,
  options: RecordFailureOptions = {},
): Promise<boolean> {
  const current = await store.statuses.get(serverId);
  // Moving is a blip: once the retry that came when the lost runner lapsed fails the same way, the
  // server has failed (no runner serves it), and backs off as any failure does.
  if (
    failure.moving &&
    current?.state === "connecting" &&
    current.lastError === failure.error &&
    typeof current.nextAttemptAt === "string" &&
    failure.at >= current.nextAttemptAt
  )
    failure.moving = false;
  const failureCount = failureCountAfter(current, failure.at);
  const backoff: BackoffOptions = {
    ...(options.retryDelaySeconds === undefined ? {} : { baseSeconds: options.retryDelaySeconds }),
    ...(options.maxRetryDelaySeconds === undefined ? {} : { capSeconds: options.maxRetryDelaySeconds }),
    ...(deterministic ? { deterministic } : {}),
  };
  const delay = retryDelaySeconds(failureCount, backoff);
  const nextAttemptAt = new Date(Date.now() + delay * 1_000).toISOString();
  const written = await store.statuses.recordAttempt(
    serverId,
    generation,
    { ok: false, ...failure },
    undefined,
    {
      ...(options.jobId ? { jobId: options.jobId } : {}),
      backoff: { failureCount, nextAttemptAt },
      ...(options.endsClaim ? { endsClaim: true } : {}),
      // The failure settles its generation: an older one that served while it connected serves no more.
      ...(current?.generation === generation && current.servingGeneration !== undefined
        ? { endsServing: true }
        : {}),
    },
  );
  if (written) {
    await store.jobs.send({ type: "retry", serverId, generation, after: failure.at }, delay);
  }
  return written;
}
