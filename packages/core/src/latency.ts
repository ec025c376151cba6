import { z } from "zod";

/**
 * What a point of a server's latency history measures: one connection attempt or liveness check of
 * the worker (`probe`), or the gateway's tool calls to the server over one slot (`calls`).
 */
export const LatencyKind = z.enum(["probe", "calls"]);
export type LatencyKind = z.infer<typeof LatencyKind>;

/**
 * One point of a server's latency history (`at`: epoch ms). A `calls` point sums up one slot: `ms` is
 * the median call, `maxMs` the slowest, `count` the calls, `errors` those that got no result, and `ok`
 * says none failed.
 */
export const LatencyPoint = z.object({
  at: z.number(),
  kind: LatencyKind.meta({
    description:
      "`probe`: one connection attempt or check of the worker; `calls`: the tool calls of a 10 s slot",
  }),
  ms: z.number().nonnegative().meta({
    description: "a probe's latency (a failed one: how long it took to fail); the median call of the slot",
  }),
  ok: z.boolean().meta({ description: "the probe connected; no call of the slot failed" }),
  count: z.number().int().nonnegative().optional().meta({ description: "calls: how many ended in the slot" }),
  errors: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .meta({ description: "calls: how many got no result (unreachable, timed out, an upstream error)" }),
  maxMs: z.number().nonnegative().optional().meta({ description: "calls: the slowest" }),
});
export type LatencyPoint = z.infer<typeof LatencyPoint>;

/**
 * The ring buffer of each kind: a point lands in slot `floor(at / grainMs) mod slots`, replacing what
 * the slot held (the latest point of its grain, or one a whole ring older), so the history is bounded
 * with no read before a write. Probes: 2 h at a minute's grain; calls: 20 min at 10 s.
 */
export const LATENCY_RINGS: Record<LatencyKind, { grainMs: number; slots: number }> = {
  probe: { grainMs: 60_000, slots: 120 },
  calls: { grainMs: 10_000, slots: 120 },
};

/** How far back a kind's history reaches: its grain times its slots. */
export function latencyWindowMs(kind: LatencyKind): number {
  const { grainMs, slots } = LATENCY_RINGS[kind];
  return grainMs * slots;
}

/** The slot of the ring a point of `kind` taken `at` lands in. */
export function latencySlot(kind: LatencyKind, at: number): number {
  const { grainMs, slots } = LATENCY_RINGS[kind];
  return Math.floor(at / grainMs) % slots;
}

/** The points still within their kind's window at `now` (older ones wait to be replaced), oldest first. */
export function recentPoints(points: LatencyPoint[], now = Date.now()): LatencyPoint[] {
  return points
    .filter((point) => point.at > now - latencyWindowMs(point.kind))
    .sort((a, b) => a.at - b.at || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
}

/**
 * The `calls` point of one slot starting `at`: the median (nearest rank) and the largest of `samples`
 * (durations in ms), `count` calls of which `errors` failed. Times are rounded to 0.1 ms.
 */
export function callsPoint(
  at: number,
  samples: readonly number[],
  count: number,
  errors: number,
  maxMs: number,
): LatencyPoint {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.max(0, Math.ceil(sorted.length / 2) - 1)] ?? 0;
  return {
    at,
    kind: "calls",
    ms: tenths(median),
    ok: errors === 0,
    count,
    errors,
    maxMs: tenths(maxMs),
  };
}

function tenths(ms: number): number {
  return Math.round(ms * 10) / 10;
}
