import { LATENCY_RINGS, type LatencyPoint, latencySlot, recentPoints } from "@mcpgw/core";
import type { LatencyHistory } from "../latency";
import { copy, type MemoryTables } from "./tables";

/**
 * Latency rings in memory, slot by slot as the table keeps them: a write replaces its slot, unread —
 * but a success never a failure of the same grain; one for a server that is gone (no status) is dropped.
 */
export function createMemoryLatencyHistory(tables: MemoryTables): LatencyHistory {
  return {
    async record(serverId, point) {
      if (!tables.statuses.has(serverId)) return;
      const rings = tables.latency.get(serverId) ?? new Map<string, LatencyPoint>();
      const slot = `${point.kind}#${latencySlot(point.kind, point.at)}`;
      const held = rings.get(slot);
      const { grainMs } = LATENCY_RINGS[point.kind];
      const sameGrain = held !== undefined && Math.floor(held.at / grainMs) >= Math.floor(point.at / grainMs);
      if (point.ok && held?.ok === false && sameGrain) return;
      rings.set(slot, copy(point));
      tables.latency.set(serverId, rings);
    },

    async read(serverId) {
      return recentPoints([...(tables.latency.get(serverId)?.values() ?? [])].map(copy));
    },
  };
}
