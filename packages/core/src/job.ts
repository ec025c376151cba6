import { z } from "zod";

/** A unit of worker work: connect after a change, probe on a sweep, retry after a failure. */
export const Job = z.strictObject({
  type: z.enum(["connect", "probe", "retry"]),
  serverId: z.string().min(1),
  /** The generation this job belongs to; a job of an older generation is dropped. */
  generation: z.number().int().nonnegative(),
});
export type Job = z.infer<typeof Job>;

/** Seconds a failed attempt waits before its retry. */
export const RETRY_DELAY_SECONDS = 15;
