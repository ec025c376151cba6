import { MAX_JOB_DELAY_SECONDS, RETRY_DELAY_SECONDS } from "./job";
import type { StoredStatus } from "./status";

/** The longest a failed server waits for its next attempt (and a deterministic failure's wait). */
export const MAX_RETRY_DELAY_SECONDS = 300;

/** The share of a backed-off delay that jitter may take off, so failures that came together spread. */
export const RETRY_JITTER = 0.2;

/** How a failed server's retries are spaced. */
export interface BackoffOptions {
  /** The first retry's delay (default {@link RETRY_DELAY_SECONDS}); each later one doubles it. */
  baseSeconds?: number;
  /** The longest delay (default {@link MAX_RETRY_DELAY_SECONDS}; at most SQS's 900 s). */
  capSeconds?: number;
  /** A failure that trying again cannot cure (nothing changed): it waits the cap at once. */
  deterministic?: boolean;
  /** A number in [0, 1) for the jitter (default Math.random). */
  random?: () => number;
}

/**
 * Seconds until the retry after the `failures`-th failure in a row (1 = the first): base, 2×base,
 * 4×base … up to the cap — 15 s, 30 s, 1 min, 2 min, 4 min, 5 min by default — or the cap at once for a
 * deterministic failure. Every delay but the first retry's loses up to {@link RETRY_JITTER} of itself at
 * random (never more than the cap; never below one second unless the base is 0).
 */
export function retryDelaySeconds(failures: number, options: BackoffOptions = {}): number {
  const base = Math.max(0, options.baseSeconds ?? RETRY_DELAY_SECONDS);
  const cap = Math.min(Math.max(base, options.capSeconds ?? MAX_RETRY_DELAY_SECONDS), MAX_JOB_DELAY_SECONDS);
  const n = Math.max(1, Math.floor(failures));
  const nominal = options.deterministic ? cap : Math.min(cap, base * 2 ** Math.min(n - 1, 30));
  if (nominal === 0 || (n === 1 && !options.deterministic)) return nominal;
  const jitter = Math.floor(nominal * RETRY_JITTER * (options.random ?? Math.random)());
  return Math.max(1, nominal - jitter);
}

/**
 * The count of failures in a row once a failure that started `at` is recorded over `status`: the first
 * (1) unless the server is `failed` already — a success or a new generation (a change, a reconnect:
 * `connecting`) ends a run, so either resets the backoff. A failure seen before the run's retry was due
 * (`nextAttemptAt`) is the same outage seen again (a call and a check at once), not a step further.
 */
export function failureCountAfter(
  status: Pick<StoredStatus, "state" | "failureCount" | "nextAttemptAt"> | undefined,
  at: string,
): number {
  if (status?.state !== "failed") return 1;
  const count = status.failureCount;
  const sofar = typeof count === "number" && Number.isSafeInteger(count) && count > 0 ? count : 1;
  const due = Date.parse(status.nextAttemptAt ?? "");
  return Date.parse(at) < due ? sofar : sofar + 1;
}

/** The next attempt's time as the API shows it: only a `failed` server waits for one. */
export function visibleNextAttempt(status: Pick<StoredStatus, "state" | "nextAttemptAt">): string | null {
  return status.state === "failed" && typeof status.nextAttemptAt === "string" ? status.nextAttemptAt : null;
}
