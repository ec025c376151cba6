import { createHash } from "node:crypto";
import { z } from "zod";

/**
 * A unit of worker work: `connect` after a change, `retry` after a failure, `probe` (a full one:
 * connect + tools/list) on a list_changed or when the catalogue has aged, `check` (liveness only: the
 * tools are listed only if the server's profile changed) on a sweep of a connected server.
 */
export const Job = z.strictObject({
  type: z.enum(["connect", "probe", "check", "retry"]),
  serverId: z.string().min(1),
  /** The generation this job belongs to; a job of an older generation is dropped. */
  generation: z.number().int().nonnegative(),
  /**
   * For a retry: when the failed attempt that scheduled it started. A later attempt has scheduled its
   * own retry (or succeeded), so this one is dropped — at most one retry chain per server.
   */
  after: z.iso.datetime().optional(),
});
export type Job = z.infer<typeof Job>;

/** Seconds a failed attempt waits before its retry. */
export const RETRY_DELAY_SECONDS = 15;

/** True when a retry was overtaken by a later attempt (which owns the retry chain now). */
export function isOvertakenRetry(job: Job, lastAttemptAt: string | null): boolean {
  return (
    job.type === "retry" && job.after !== undefined && lastAttemptAt !== null && lastAttemptAt > job.after
  );
}

/** When a status's generation began, and when it was last attempted (ISO; null for never/unknown). */
interface AttemptTimes {
  lastConnectionAttemptAt: string | null;
  supersededAt: string | null;
}

/**
 * True when the status records an attempt since its generation began (never for a generation whose
 * start is not known).
 */
export function attemptedThisGeneration({
  lastConnectionAttemptAt: last,
  supersededAt: began,
}: AttemptTimes): boolean {
  return last !== null && began !== null && last >= began;
}

/**
 * True when a connect job's generation was attempted already ({@link attemptedThisGeneration}): the
 * connect was re-sent or redelivered, and that attempt's retry chain (or success) carries on without it.
 */
export function isSpentConnect(job: Job, status: AttemptTimes): boolean {
  return job.type === "connect" && attemptedThisGeneration(status);
}

/** SQS's longest delay: a sweep spreads its jobs over at most this many seconds. */
export const MAX_JOB_DELAY_SECONDS = 900;

/**
 * How long a sweep's job for `serverId` waits, so a sweep's work spreads over its interval instead of
 * arriving at once: a stable offset from a hash of the id, in [0, min(spreadSeconds, 900)). The same
 * server lands at the same point of every interval, so its checks stay one interval apart.
 */
export function sweepDelaySeconds(serverId: string, spreadSeconds: number): number {
  const span = Math.min(Math.floor(spreadSeconds), MAX_JOB_DELAY_SECONDS);
  if (span <= 1) return 0;
  return createHash("sha256").update(serverId).digest().readUInt32BE(0) % span;
}
