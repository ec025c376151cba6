/**
 * Calls per bucket, errors and p50/p95 over the last hour or day, computed from the audit trail's
 * call events (what the console's per-server and per-tool charts draw).
 */
import type { AuditEvent } from "./audit";

/** The windows the stats cover: the last hour in 60 one-minute buckets, the last day in 48 of 30 minutes. */
export const AUDIT_STATS_WINDOWS = {
  hour: { bucketMs: 60_000, buckets: 60 },
  day: { bucketMs: 30 * 60_000, buckets: 48 },
} as const;
export type AuditStatsWindow = keyof typeof AUDIT_STATS_WINDOWS;

/**
 * Outcomes that are not errors: a result (`ok`) and a tool asking the caller for input. A tool's own
 * failure (`tool_error`, an `isError` result) counts as an error — what an operator reads as a tool's
 * error rate — and is also counted apart as `toolErrors`; every other outcome is the gateway's or the
 * upstream's error code.
 */
const NOT_ERRORS: ReadonlySet<string> = new Set(["ok", "input_required"]);

/** The figures of a span of time: calls, errors (tool errors among them), p50/p95 duration (null: no call). */
export interface AuditStatsFigures {
  calls: number;
  errors: number;
  toolErrors: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/** One bucket, starting `at` (ISO 8601). */
export interface AuditStatsBucket extends AuditStatsFigures {
  at: string;
}

/** What `GET /v1/audit/stats` answers (`partial`: the read stopped at its bound before the window's start). */
export interface AuditStats {
  window: AuditStatsWindow;
  bucketMs: number;
  buckets: AuditStatsBucket[];
  totals: AuditStatsFigures & { errorRate: number };
  partial: boolean;
}

/**
 * The time range of a window at `now`: from the start of its first bucket (buckets are aligned to
 * their size, the last one holds `now`) to `now`.
 */
export function auditStatsRange(window: AuditStatsWindow, now: number): { since: number; until: number } {
  const { bucketMs, buckets } = AUDIT_STATS_WINDOWS[window];
  const last = Math.floor(now / bucketMs) * bucketMs;
  return { since: last - (buckets - 1) * bucketMs, until: now };
}

/**
 * The stats of `events` over `window` at `now`: only call events within the range count; p50/p95 by
 * nearest rank over each bucket's durations (and all of them for the totals); errorRate = errors / calls
 * (0 without calls).
 */
export function auditStats(
  events: Iterable<AuditEvent>,
  options: { window: AuditStatsWindow; now: number; partial?: boolean },
): AuditStats {
  const { bucketMs, buckets: count } = AUDIT_STATS_WINDOWS[options.window];
  const { since, until } = auditStatsRange(options.window, options.now);
  const slots = Array.from({ length: count }, () => ({
    durations: [] as number[],
    errors: 0,
    toolErrors: 0,
  }));
  for (const event of events) {
    if (event.type !== "call") continue;
    const at = Date.parse(event.at);
    if (!(at >= since && at <= until)) continue;
    const slot = slots[Math.min(count - 1, Math.floor((at - since) / bucketMs))];
    if (!slot) continue;
    slot.durations.push(event.durationMs);
    if (!NOT_ERRORS.has(event.outcome)) slot.errors += 1;
    if (event.outcome === "tool_error") slot.toolErrors += 1;
  }
  const buckets = slots.map((slot, index) => ({
    at: new Date(since + index * bucketMs).toISOString(),
    ...figures(slot.durations, slot.errors, slot.toolErrors),
  }));
  const all = figures(
    slots.flatMap((slot) => slot.durations),
    sum(slots.map((slot) => slot.errors)),
    sum(slots.map((slot) => slot.toolErrors)),
  );
  return {
    window: options.window,
    bucketMs,
    buckets,
    totals: { ...all, errorRate: all.calls ? all.errors / all.calls : 0 },
    partial: options.partial ?? false,
  };
}

/** The p-th percentile (0–100] of ascending `sorted` by nearest rank; null when empty. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] ?? null;
}

function figures(durations: number[], errors: number, toolErrors: number): AuditStatsFigures {
  const sorted = durations.sort((a, b) => a - b);
  return {
    calls: sorted.length,
    errors,
    toolErrors,
    p50Ms: nearestRank(sorted, 50),
    p95Ms: nearestRank(sorted, 95),
  };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
