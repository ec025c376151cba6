/**
 * The audit trail's store: append-only events, read newest first by time range and filters.
 *
 * Keys (within the one table and its byKind index, no index of its own):
 * - every event: `pk = AUDIT#<yyyy-mm-dd>` (the UTC day it ended), `sk = <event id>` (ids sort by
 *   time, see `auditEventId`), so a time range reads only that range of one day's partition per day;
 * - an event on a server also carries `kind = AUDIT#<serverId>#<yyyy-mm-dd>`, `kindSort = <event id>`:
 *   the byKind index (projection ALL) holds it again under a per-server, per-day partition, so
 *   `server=` reads only that server's events (one more index write per event, no extra item).
 *
 * What a query costs: time bounds narrow the key range (nothing outside it is read); `server` (by id)
 * reads only that server's events; `principal`, `tool`, `outcome` and `server` by a name no server has
 * now are filtered after reading (their cost is the events of the range). One query reads at most
 * {@link AUDIT_READ_BUDGET} (items, bytes, requests) and returns a cursor to go on from where it stopped.
 */
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { AuditEvent } from "@mcpgw/core";
import { TABLE_KEYS } from "./table";

/** What to read: each field set narrows the events; `since` is required (the walk's lower bound). */
export interface AuditFilter {
  /** A key id, key name, user subject, or `admin`. */
  principal?: string;
  /** The server: events with this server id, or this server name (e.g. of a deleted server). */
  server?: { id?: string; name?: string };
  /** A tool name, or `<server name>__<tool>`. */
  tool?: string;
  outcome?: string;
  /** Epoch ms, inclusive. */
  since: number;
  /** Epoch ms, inclusive (default: now). */
  until?: number;
}

export interface AuditPage {
  /** Newest first. */
  events: AuditEvent[];
  /** Where the next page starts; null when the range is read to its end. */
  cursor: string | null;
}

/** What one query may read before it returns a cursor: items, bytes (as JSON) and requests. */
export const AUDIT_READ_BUDGET = { items: 2_000, bytes: 2 * 1024 * 1024, requests: 40 } as const;

/** The audit trail: events are appended, read, and expire by TTL; nothing edits or deletes one. */
export interface AuditStore {
  /**
   * Writes `events` (25 a request, unprocessed ones retried with backoff), each to expire
   * `retentionDays` after it ended. Throws when the table keeps refusing.
   */
  append(events: AuditEvent[], options: { retentionDays: number }): Promise<void>;
  /** Up to `limit` events matching `filter`, newest first, from `cursor` (a page's `cursor`) on. */
  query(filter: AuditFilter, page: { limit: number; cursor?: string | undefined }): Promise<AuditPage>;
}

/** `yyyy-mm-dd` (UTC) of epoch ms. */
export function auditDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The partition of a day's events. */
export function auditPartition(day: string): string {
  return `AUDIT#${day}`;
}

/** The byKind partition of a server's events of a day. */
export function auditServerPartition(serverId: string, day: string): string {
  return `AUDIT#${serverId}#${day}`;
}

/** The lowest id of millisecond `at` (12 hex digits of time, then zeros). */
export function lowestIdAt(at: number): string {
  return `${Math.max(0, Math.floor(at)).toString(16).padStart(12, "0")}${"0".repeat(16)}`;
}

/** The highest id of millisecond `at`. */
function highestIdAt(at: number): string {
  return `${Math.max(0, Math.floor(at)).toString(16).padStart(12, "0")}${"f".repeat(16)}`;
}

/** The end time (epoch ms) an event id names. */
export function idTime(id: string): number {
  return Number.parseInt(id.slice(0, 12), 16);
}

/** An event id or cursor: 28 lowercase hex digits. */
export const AUDIT_ID_PATTERN = /^[0-9a-f]{28}$/;

/** True when `event` matches the filter's non-key fields (principal, server, tool, outcome). */
export function matchesAudit(event: AuditEvent, filter: Omit<AuditFilter, "since" | "until">): boolean {
  if (filter.outcome !== undefined && event.outcome !== filter.outcome) return false;
  if (filter.principal !== undefined && !principalMatches(event, filter.principal)) return false;
  if (filter.server && !serverMatches(event, filter.server)) return false;
  if (filter.tool !== undefined) {
    const { tool } = filter;
    if (event.tool !== tool && `${event.serverName}__${event.tool}` !== tool) return false;
  }
  return true;
}

function principalMatches({ principal }: AuditEvent, wanted: string): boolean {
  switch (principal.kind) {
    case "admin":
      return wanted === "admin" || (principal.sub !== undefined && principal.sub === wanted);
    case "key":
      return principal.keyId === wanted || principal.keyName === wanted;
    case "user":
      return principal.sub === wanted;
  }
}

function serverMatches(event: AuditEvent, server: NonNullable<AuditFilter["server"]>): boolean {
  return (
    (server.id !== undefined && event.serverId === server.id) ||
    (server.name !== undefined && event.serverName === server.name)
  );
}

/**
 * Where a query walks: the bounds as ids (`upper` exclusive, `lower` inclusive) and the days from the
 * newest to the oldest (`until`, at most now, to `since`), at most as many as a query makes requests:
 * `more` when older days of the range are left for the next page. A cursor is the exclusive upper bound
 * the previous page stopped at.
 */
export function auditWalk(
  filter: Pick<AuditFilter, "since" | "until">,
  cursor: string | undefined,
  now = Date.now(),
): { lower: string; upper: string; days: string[]; more: boolean } {
  // Just past every id of `until`'s millisecond ("g" sorts after every hex digit); no event is later than now.
  const bound = `${highestIdAt(Math.min(filter.until ?? now, now)).slice(0, 27)}g`;
  const upper = cursor !== undefined && cursor < bound ? cursor : bound;
  const lower = lowestIdAt(filter.since);
  // The newest millisecond below `upper`: its own, unless it is the lowest id of it.
  const newest = idTime(upper) - (upper.endsWith(LOWEST_SUFFIX) ? 1 : 0);
  const days: string[] = [];
  let more = false;
  if (newest >= filter.since) {
    const oldest = auditDay(filter.since);
    // No query reads more days than it makes requests (an empty day costs one).
    for (let day = auditDay(newest); day >= oldest; day = auditDay(Date.parse(`${day}T00:00:00Z`) - 1)) {
      if (days.length === AUDIT_READ_BUDGET.requests) {
        more = true;
        break;
      }
      days.push(day);
    }
  }
  return { lower, upper, days, more };
}

const LOWEST_SUFFIX = "0".repeat(16);

/** The longest event (JSON characters) stored whole; a longer one is shortened (DynamoDB takes 400 KB). */
export const AUDIT_EVENT_MAX_CHARS = 16 * 1024;
const SHORT_TEXT = 256;
const SHORT_LIST = 64;

/**
 * The event as stored: itself when its JSON fits {@link AUDIT_EVENT_MAX_CHARS}, else a copy with every
 * string clipped and every list cut short, so no event can make an item the table refuses (and a batch
 * with it). Returns its JSON too, as it is written, and whether it was shortened.
 */
export function fitAuditEvent(event: AuditEvent): { event: AuditEvent; json: string; shortened: boolean } {
  const json = JSON.stringify(event);
  if (json.length <= AUDIT_EVENT_MAX_CHARS) return { event, json, shortened: false };
  const short = shorten(event) as AuditEvent;
  return { event: short, json: JSON.stringify(short), shortened: true };
}

/** A value with its strings clipped and its lists cut short, two levels deep (an event's shape). */
function shorten(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.slice(0, SHORT_TEXT);
  if (typeof value !== "object" || value === null) return value;
  if (depth > 2) return undefined;
  if (Array.isArray(value)) return value.slice(0, SHORT_LIST).map((item) => shorten(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, SHORT_LIST)
      .map(([key, item]) => [key.slice(0, SHORT_TEXT), shorten(item, depth + 1)]),
  );
}

/** The stored item of an event: its keys, its server index keys, its TTL, and the event (fitted). */
export function auditItem(original: AuditEvent, retentionDays: number): Record<string, unknown> {
  const { event, json } = fitAuditEvent(original);
  const at = idTime(event.id);
  const day = auditDay(at);
  return {
    pk: auditPartition(day),
    sk: event.id,
    ...(event.serverId
      ? { [TABLE_KEYS.kind]: auditServerPartition(event.serverId, day), [TABLE_KEYS.kindSort]: event.id }
      : {}),
    [TABLE_KEYS.ttl]: Math.floor(at / 1000) + Math.round(retentionDays * 86_400),
    // One string, not a map: cheap to marshal and to read, and its length is what a read costs.
    event: json,
  };
}

/** What one read of a day's range returns: its items newest first (`event` unset when damaged). */
export interface AuditRead {
  items: Array<{ id: string; event: AuditEvent | undefined; bytes: number }>;
  /** More items in the range than were read. */
  more: boolean;
}

/**
 * Pages through the walk with `read` (a day's items with ids in `[lower, upper]`, newest first, at most
 * `limit`), within {@link AUDIT_READ_BUDGET}: the store's one query loop, for the table and memory alike.
 */
export async function walkAudit(
  filter: AuditFilter,
  page: { limit: number; cursor?: string | undefined },
  read: (day: string, range: { lower: string; upper: string }, limit: number) => Promise<AuditRead>,
): Promise<AuditPage> {
  const { lower, upper, days, more: olderDays } = auditWalk(filter, page.cursor);
  const events: AuditEvent[] = [];
  const budget: Record<keyof typeof AUDIT_READ_BUDGET, number> = { ...AUDIT_READ_BUDGET };
  let position = upper;
  for (const day of days) {
    for (let more = true; more; ) {
      if (budget.requests <= 0 || budget.items <= 0 || budget.bytes <= 0) return { events, cursor: position };
      budget.requests--;
      // Ids at `position` are read again and skipped (the range's upper end is inclusive): one more.
      const got = await read(day, { lower, upper: position }, Math.min(budget.items, 500) + 1);
      more = got.more;
      for (const { id, event, bytes } of got.items) {
        if (id >= position) continue;
        budget.items--;
        budget.bytes -= bytes;
        position = id;
        if (!event) continue;
        if (!matchesAudit(event, filter)) continue;
        events.push(event);
        if (events.length >= page.limit) return { events, cursor: id };
      }
    }
    // Every id of this day is read: the next starts below its first millisecond.
    position = lowestIdAt(Date.parse(`${day}T00:00:00Z`));
  }
  // The walk's days ended before `since`'s: the next page starts below the last one read.
  return { events, cursor: olderDays ? position : null };
}

/** The audit trail in the table (see the module's doc for its keys and costs). */
export function createAuditStore(ddb: DynamoDBDocumentClient, tableName: string): AuditStore {
  return {
    async append(events, { retentionDays }) {
      // The requests go out together: their serializing is one burst of the process's time, not one
      // slice between every other request's, and they take one round trip, not one each.
      const chunks: AuditEvent[][] = [];
      for (let start = 0; start < events.length; start += 25) chunks.push(events.slice(start, start + 25));
      const results = await Promise.allSettled(
        chunks.map(async (chunk) => {
          let requests = chunk.map((event) => ({ PutRequest: { Item: auditItem(event, retentionDays) } }));
          for (let attempt = 0; requests.length > 0; attempt++) {
            if (attempt > 5) throw new Error("DynamoDB kept audit events unprocessed in a batch write");
            if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1_000)));
            const result = await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
            requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
          }
        }),
      );
      const failed = results.find((result) => result.status === "rejected");
      if (failed) throw failed.reason;
    },

    query(filter, page) {
      const serverId = filter.server?.id;
      // By server id (and no other name to match): its own partitions on the byKind index.
      const byServer = serverId !== undefined && filter.server?.name === undefined;
      return walkAudit(filter, page, async (day, range, limit) => {
        const { Items = [], LastEvaluatedKey } = await ddb.send(
          new QueryCommand({
            TableName: tableName,
            ...(byServer ? { IndexName: TABLE_KEYS.byKindIndex } : {}),
            KeyConditionExpression: "#pk = :pk AND #sk BETWEEN :lower AND :upper",
            ExpressionAttributeNames: {
              "#pk": byServer ? TABLE_KEYS.kind : TABLE_KEYS.partition,
              "#sk": byServer ? TABLE_KEYS.kindSort : TABLE_KEYS.sort,
            },
            ExpressionAttributeValues: {
              ":pk": byServer ? auditServerPartition(serverId, day) : auditPartition(day),
              ":lower": range.lower,
              ":upper": range.upper,
            },
            ScanIndexForward: false,
            Limit: limit,
          }),
        );
        return {
          items: Items.map((item) => ({
            id: String(item[byServer ? TABLE_KEYS.kindSort : TABLE_KEYS.sort]),
            ...storedEvent(item.event),
          })),
          more: LastEvaluatedKey !== undefined,
        };
      });
    },
  };
}

/** A stored event (its JSON) and its size; a damaged one is no event. */
export function storedEvent(stored: unknown): { event: AuditEvent | undefined; bytes: number } {
  if (typeof stored !== "string") return { event: undefined, bytes: 0 };
  try {
    const event = JSON.parse(stored) as AuditEvent;
    const valid = typeof event === "object" && event !== null && typeof event.id === "string";
    return { event: valid ? event : undefined, bytes: stored.length };
  } catch {
    return { event: undefined, bytes: stored.length };
  }
}
