import type { Store } from "@mcpgw/aws";
import { errorFields, type LatencyPoint, type Logger } from "@mcpgw/core";
import type { ProbeResult } from "@mcpgw/upstream";

/**
 * The latency-history point of one connection attempt or check: when it started, and its latency
 * when it connected (what the status shows), else how long it took to fail.
 */
export function probePoint(result: ProbeResult, elapsedMs: number): LatencyPoint {
  const at = Date.parse(result.at);
  const ms = result.ok ? result.latencyMs : Math.round(elapsedMs * 10) / 10;
  return { at: Number.isNaN(at) ? Date.now() : at, kind: "probe", ms, ok: result.ok };
}

/**
 * Writes `point` to the server's latency history. Never throws: the history feeds a chart, so a
 * write that fails is logged (a warning; a missing table once per interval) and the job goes on.
 */
export async function recordProbePoint(
  { store, logger }: { store: Store; logger: Logger },
  serverId: string,
  point: LatencyPoint,
): Promise<void> {
  try {
    await store.latency.record(serverId, point);
  } catch (error) {
    if (store.outages.report(logger, error)) return;
    logger.warn("latency point not recorded", { serverId, ...errorFields(error) });
  }
}
