import { z } from "zod";

/** A unit of worker work: connect after a change, probe on a sweep, retry after a failure. */
export const Job = z.strictObject({
  type: z.enum(["connect", "probe", "retry"]),
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
