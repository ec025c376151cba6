import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import {
  LATENCY_RINGS,
  LatencyKind,
  type LatencyPoint,
  latencySlot,
  latencyWindowMs,
  recentPoints,
} from "@mcpgw/core";
import { isConditionFailure, putWhileExists } from "./dynamo";
import { keys, TABLE_KEYS } from "./table";

/**
 * A server's latency history, bounded: a ring buffer per kind (see `LATENCY_RINGS`), each point
 * written into its time slot with no read, so the history never outgrows its slots. Deleting the
 * server deletes it, and a point written after that is not kept.
 */
export interface LatencyHistory {
  /**
   * Writes `point` into its kind's slot, replacing what the slot held — except that a success never
   * replaces a failure of the same grain (a failed probe, a slot of calls with errors, stays shown after
   * the server recovers within its minute): one conditional write, no read (a ring's first point, made
   * only while its server exists, costs a transaction more). Dropped when the server is gone.
   */
  record(serverId: string, point: LatencyPoint): Promise<void>;
  /** The points still within their kind's window, oldest first; none for an unknown server. */
  read(serverId: string): Promise<LatencyPoint[]>;
}

/**
 * A stored slot: `[at, ms, ok]` (ok as 1/0), then `[count, errors, maxMs]` for calls. A list, not a
 * map, and slot attributes named `s<slot>`: an update costs the size of its whole item (≤ 5 KB).
 */
type StoredSlot = [number, number, number] | [number, number, number, number, number, number];

function isStoredSlot(value: unknown): value is StoredSlot {
  return (
    Array.isArray(value) &&
    (value.length === 3 || value.length === 6) &&
    value.every((n) => typeof n === "number" && Number.isFinite(n))
  );
}

/** Seconds a ring outlives its last write: its window, then a margin (a dormant server's ring goes). */
function expiresAt(kind: LatencyKind, now = Date.now()): number {
  return Math.ceil((now + latencyWindowMs(kind)) / 1000) + 600;
}

export function createLatencyHistory(ddb: DynamoDBDocumentClient, tableName: string): LatencyHistory {
  return {
    async record(serverId, point) {
      const key = keys.serverLatency(serverId, point.kind);
      const [slot, stored, ttl] = [slotName(point), encodeSlot(point), expiresAt(point.kind)];
      // A success lands only on an empty slot, a success, or a point of an earlier grain (`[at, ms, ok…]`).
      const keepFailure = point.ok
        ? {
            condition: " AND (attribute_not_exists(#slot) OR #slot[2] = :ok OR #slot[0] < :grain)",
            values: { ":ok": 1, ":grain": grainStart(point) },
          }
        : { condition: "", values: {} };
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          // Only into a ring that exists: one a deleted server's delete removed stays removed.
          await ddb.send(
            new UpdateCommand({
              TableName: tableName,
              Key: key,
              UpdateExpression: "SET #slot = :point, #ttl = :ttl",
              ConditionExpression: `attribute_exists(pk)${keepFailure.condition}`,
              ExpressionAttributeNames: { "#slot": slot, "#ttl": TABLE_KEYS.ttl },
              ExpressionAttributeValues: { ":point": stored, ":ttl": ttl, ...keepFailure.values },
              ReturnValuesOnConditionCheckFailure: "ALL_OLD",
            }),
          );
          return;
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
          // The ring exists: its slot holds a failure of this grain, which this success leaves shown.
          if ((error as { Item?: unknown }).Item !== undefined) return;
        }
        // No ring yet (its first point, or the first since it expired), or no server: the ring is
        // made only while the server's status exists, which its delete removes first.
        const made = await putWhileExists(ddb, tableName, keys.serverStatus(serverId), {
          Item: { ...key, [slot]: stored, [TABLE_KEYS.ttl]: ttl },
          ConditionExpression: "attribute_not_exists(pk)",
        });
        // The server is gone (so is its point), or written; else another writer made the ring meanwhile.
        if (made !== "put_refused") return;
      }
    },

    async read(serverId) {
      const { Items = [] } = await ddb.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": keys.serverLatency(serverId, "probe").pk },
          ConsistentRead: true,
        }),
      );
      return recentPoints(Items.flatMap(pointsOf));
    },
  };
}

/** When the grain of `point`'s slot began (epoch ms). */
function grainStart(point: LatencyPoint): number {
  const { grainMs } = LATENCY_RINGS[point.kind];
  return Math.floor(point.at / grainMs) * grainMs;
}

/** The attribute of the slot `point` lands in. */
function slotName(point: LatencyPoint): string {
  return `s${latencySlot(point.kind, point.at)}`;
}

function encodeSlot(point: LatencyPoint): StoredSlot {
  const head: [number, number, number] = [point.at, point.ms, point.ok ? 1 : 0];
  if (point.kind !== "calls") return head;
  return [...head, point.count ?? 0, point.errors ?? 0, point.maxMs ?? point.ms];
}

/** The points of one stored ring (a damaged slot is left out). */
function pointsOf(item: Record<string, unknown>): LatencyPoint[] {
  const kind = LatencyKind.safeParse(item.sk);
  if (!kind.success) return [];
  const slots = LATENCY_RINGS[kind.data].slots;
  return Object.entries(item).flatMap(([name, value]) => {
    const slot = /^s(\d+)$/.exec(name)?.[1];
    if (slot === undefined || Number(slot) >= slots || !isStoredSlot(value)) return [];
    const [at, ms, ok, count, errors, maxMs] = value;
    const point: LatencyPoint = { at, kind: kind.data, ms, ok: ok === 1 };
    return [kind.data === "calls" && count !== undefined ? { ...point, count, errors, maxMs } : point];
  });
}
