/**
 * The audit trail's store: append-only events, read newest first by time range and filters.
 *
 * Items (within the one table and its byKind index, no index of its own): a pack of events of one day
 * and one server (or none), written together (up to {@link AUDIT_PACK}: 100 events, 64 KiB, 2 s apart):
 * - `pk = AUDIT#<yyyy-mm-dd>` (the UTC day they ended), `sk = <its newest event's id>` (ids sort by
 *   time, see `auditEventId`), so a time range reads only that range of one day's partition per day
 *   (widened by a pack's span, 2 s);
 * - a pack on a server also carries `kind = AUDIT#<serverId>#<yyyy-mm-dd>`, `kindSort = <sk>`: the
 *   byKind index (projection ALL) holds it again under a per-server, per-day partition, so `server=`
 *   reads only that server's events (one more index write per pack, no extra item).
 * - `events`: the pack's events as one JSON array, newest first, deflated (raw DEFLATE, a binary
 *   attribute): DynamoDB charges writes, index writes and storage by the kilobyte, a pack's events share
 *   most of their text (100 call events deflate to about a ninth of their JSON), and the SDK's
 *   serializer escapes a JSON text in a string character by character.
 * An item written before packs were deflated holds the JSON array as a string, and one written before
 * packs one `event`: both are read the same way.
 *
 * What a query costs: time bounds narrow the key range (nothing outside it is read); `server` (by id)
 * reads only that server's events; `principal`, `tool`, `outcome` and `server` by a name no server has
 * now are filtered after reading (their cost is the events of the range). One query reads at most
 * {@link AUDIT_READ_BUDGET} (items, bytes, requests) and returns a cursor to go on from where it stopped.
 */

import { deflateRawSync, inflateRawSync } from "node:zlib";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { BatchWriteCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type AuditEvent, settleAtMost } from "@mcpgw/core";
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
   * Writes `entries` (see {@link auditEntry}; packs of them, 25 a request, unprocessed ones retried with
   * backoff), each to expire `retentionDays` after its event ended. Throws when the table keeps refusing.
   */
  append(entries: AuditEntry[], options: { retentionDays: number }): Promise<void>;
  /** Up to `limit` events matching `filter`, newest first, from `cursor` (a page's `cursor`) on. */
  query(filter: AuditFilter, page: { limit: number; cursor?: string | undefined }): Promise<AuditPage>;
}

const DAY_MS = 86_400_000;
/** The day {@link auditDay} named last: a batch's events almost all end on one day. */
let lastDay = { start: 0, day: "1970-01-01" };

/** `yyyy-mm-dd` (UTC) of epoch ms. */
export function auditDay(at: number): string {
  if (at >= lastDay.start && at < lastDay.start + DAY_MS) return lastDay.day;
  const start = Math.floor(at / DAY_MS) * DAY_MS;
  lastDay = { start, day: new Date(start).toISOString().slice(0, 10) };
  return lastDay.day;
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
 * An event as the trail stores it: its JSON — itself when that fits {@link AUDIT_EVENT_MAX_CHARS}, else
 * a copy's with every string clipped and every list cut short, so no event can make an item the table
 * refuses (and a batch with it) — and the id and server its pack is keyed by. A writer holds entries,
 * not events: one string an event, which a second in a buffer does not turn into a graph of objects for
 * the garbage collector to copy and promote.
 */
export interface AuditEntry {
  id: string;
  serverId: string | undefined;
  json: string;
  /** The event was too large to store whole and was shortened. */
  shortened: boolean;
}

/** The entry `event` is stored as (see {@link AuditEntry}). */
export function auditEntry(event: AuditEvent): AuditEntry {
  const json = JSON.stringify(event);
  if (json.length <= AUDIT_EVENT_MAX_CHARS)
    return { id: event.id, serverId: event.serverId, json, shortened: false };
  const short = shorten(event) as AuditEvent;
  return { id: short.id, serverId: short.serverId, json: JSON.stringify(short), shortened: true };
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

/**
 * How events are packed into items: at most this many events, this much JSON, and this much time
 * between a pack's oldest and newest event. A long-running process writes a second's events of a server
 * in one item instead of one item (and one index entry) each; a Lambda invocation's one event is a pack.
 */
export const AUDIT_PACK = { events: 100, chars: 64 * 1024, spanMs: 2_000 } as const;

/** Packs one batch write request carries (DynamoDB's BatchWriteItem takes 25 items). */
export const AUDIT_PACKS_PER_REQUEST = 25;

/** The most batch write requests one append has under way at once. */
export const AUDIT_REQUESTS_AT_ONCE = 4;

/** Events of one day and one server (or none), stored as one item keyed by its newest event's id. */
export interface AuditPack {
  day: string;
  serverId: string | undefined;
  /** The newest event's id: the item's sort key. */
  sk: string;
  /** The fitted events' JSON, newest first. */
  json: string;
}

/**
 * `entries` in packs (see {@link AUDIT_PACK}): grouped by the day their events ended and their server,
 * in id order. The same entries always make the same packs, so a retried write overwrites what an
 * earlier try wrote.
 */
export function auditPacks(entries: AuditEntry[]): AuditPack[] {
  const groups = new Map<string, AuditEntry[]>();
  for (const entry of entries) {
    const key = `${auditDay(idTime(entry.id))}#${entry.serverId ?? ""}`;
    const group = groups.get(key) ?? [];
    if (group.length === 0) groups.set(key, group);
    group.push(entry);
  }
  const packs: AuditPack[] = [];
  const close = (members: AuditEntry[]) => {
    const newest = members.at(-1);
    if (!newest) return;
    packs.push({
      day: auditDay(idTime(newest.id)),
      serverId: newest.serverId,
      sk: newest.id,
      json: `[${members
        .map((member) => member.json)
        .reverse()
        .join(",")}]`,
    });
  };
  for (const group of groups.values()) {
    group.sort((a, b) => (a.id < b.id ? -1 : 1));
    let members: AuditEntry[] = [];
    let chars = 2;
    for (const member of group) {
      const first = members[0];
      if (
        first &&
        (members.length >= AUDIT_PACK.events ||
          chars + member.json.length + 1 > AUDIT_PACK.chars ||
          idTime(member.id) - idTime(first.id) > AUDIT_PACK.spanMs)
      ) {
        close(members);
        members = [];
        chars = 2;
      }
      members.push(member);
      chars += member.json.length + 1;
    }
    close(members);
  }
  return packs;
}

/** The stored item of a pack: its keys, its server index keys, its TTL (from its newest event) and its events. */
export function auditPackItem(pack: AuditPack, retentionDays: number): Record<string, unknown> {
  return {
    pk: auditPartition(pack.day),
    sk: pack.sk,
    ...(pack.serverId
      ? { [TABLE_KEYS.kind]: auditServerPartition(pack.serverId, pack.day), [TABLE_KEYS.kindSort]: pack.sk }
      : {}),
    [TABLE_KEYS.ttl]: Math.floor(idTime(pack.sk) / 1000) + Math.round(retentionDays * 86_400),
    // One deflated text, not a list of maps: cheap to marshal and to read (level 1: the fastest).
    events: deflateRawSync(pack.json, { level: 1 }),
  };
}

/**
 * The most a stored pack may inflate to: far above any pack written (packs close at AUDIT_PACK.chars;
 * a pack of one shortened event holds a few hundred KB at most, escapes included), and a bound on what
 * a damaged item can make a read inflate. A larger one is damaged.
 */
const PACK_MAX_BYTES = 4 * 1024 * 1024;

/** What one read of a day's range returns: its items (packs) newest first, each with its events. */
export interface AuditRead {
  items: Array<{ id: string; events: AuditEvent[]; bytes: number }>;
  /** More items in the range than were read. */
  more: boolean;
}

/** The highest sort key of a pack that may hold an event below `upper`: a pack spans at most spanMs. */
function packUpper(upper: string): string {
  return highestIdAt(idTime(upper) + AUDIT_PACK.spanMs);
}

/**
 * Pages through the walk with `read` (a day's items with sort keys in `[lower, upper]`, newest first,
 * at most `limit`), within {@link AUDIT_READ_BUDGET}: the store's one query loop, for the table and
 * memory alike. Packs overlap in time (each process and server writes its own), so their events are
 * merged: once the pack keyed `s` is read, no pack left holds an event at or above `s`, and those are
 * given out, newest first (an event written twice, by a retry that split its batch, once).
 */
export async function walkAudit(
  filter: AuditFilter,
  page: { limit: number; cursor?: string | undefined },
  read: (day: string, range: { lower: string; upper: string }, limit: number) => Promise<AuditRead>,
): Promise<AuditPage> {
  const { lower, upper, days, more: olderDays } = auditWalk(filter, page.cursor);
  const events: AuditEvent[] = [];
  const budget: Record<keyof typeof AUDIT_READ_BUDGET, number> = { ...AUDIT_READ_BUDGET };
  // Events read and not given out yet: each below `upper`, at or above `lower`.
  let held: AuditEvent[] = [];
  // Where the next page starts: every event at or above it is given out or filtered out.
  let frontier = upper;
  let last: string | undefined;
  /** Gives out the held events at or above `floor`, newest first; the page's cursor once it is full. */
  const release = (floor: string): string | undefined => {
    const ready = held.filter((event) => event.id >= floor).sort((a, b) => (a.id < b.id ? 1 : -1));
    held = held.filter((event) => event.id < floor);
    for (const event of ready) {
      if (event.id === last) continue;
      last = event.id;
      if (!matchesAudit(event, filter)) continue;
      events.push(event);
      if (events.length >= page.limit) return event.id;
    }
    return undefined;
  };
  for (const day of days) {
    let position = packUpper(upper);
    let firstRead = true;
    for (let more = true; more; firstRead = false) {
      // A page ends on its budget only once it got below `upper`: the packs above it (read again for
      // their span) cannot use the budget up and hand back the cursor the page was given.
      if (frontier < upper && (budget.requests <= 0 || budget.items <= 0 || budget.bytes <= 0))
        return { events, cursor: frontier };
      budget.requests--;
      // After the first read, the item at `position` is read again and skipped (the range's upper end
      // is inclusive): one more.
      const got = await read(day, { lower, upper: position }, Math.min(budget.items, 500) + 1);
      more = got.more;
      for (const item of got.items) {
        if (!firstRead && item.id >= position) continue;
        position = item.id;
        const inRange = item.events.filter((event) => event.id >= lower && event.id < upper);
        // A pack above the range read only for its span (the 2 s before a page's cursor, read again)
        // costs its request, not the page's item and byte budget; one reaching into it, its events there.
        if (item.id >= upper && inRange.length === 0) continue;
        budget.items -= item.id >= upper ? inRange.length : Math.max(1, item.events.length);
        if (item.id < upper) budget.bytes -= item.bytes;
        held.push(...inRange);
        const full = release(item.id);
        if (full !== undefined) return { events, cursor: full };
        if (item.id < frontier) frontier = item.id;
        if (frontier < upper && (budget.items <= 0 || budget.bytes <= 0)) return { events, cursor: frontier };
      }
    }
    // Every item of this day is read: what is held is given out, and the next day starts below it.
    const full = release("");
    if (full !== undefined) return { events, cursor: full };
    frontier = lowestIdAt(Date.parse(`${day}T00:00:00Z`));
  }
  // The walk's days ended before `since`'s: the next page starts below the last one read.
  return { events, cursor: olderDays ? frontier : null };
}

/** The audit trail in the table (see the module's doc for its keys and costs). */
export function createAuditStore(ddb: DynamoDBDocumentClient, tableName: string): AuditStore {
  return {
    async append(entries, { retentionDays }) {
      const items = auditPacks(entries).map((pack) => auditPackItem(pack, retentionDays));
      // The requests go out together, up to AUDIT_REQUESTS_AT_ONCE: their serializing is one burst of the
      // process's time, not one slice between every other request's, and they take one round trip, not
      // one each — and a batch of many servers' events (many small packs) is no flood of requests.
      const chunks: Array<typeof items> = [];
      for (let start = 0; start < items.length; start += AUDIT_PACKS_PER_REQUEST)
        chunks.push(items.slice(start, start + AUDIT_PACKS_PER_REQUEST));
      const results = await settleAtMost(
        AUDIT_REQUESTS_AT_ONCE,
        chunks.map((chunk) => async () => {
          let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
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
            ...storedEvents(item),
          })),
          more: LastEvaluatedKey !== undefined,
        };
      });
    },
  };
}

/**
 * The events an item holds (a pack's `events`, deflated or as a string, or the `event` of an item
 * written before packs) and their size as JSON; a damaged item or event is none, and so is a pack that
 * would inflate past {@link PACK_MAX_BYTES}.
 */
export function storedEvents(item: Record<string, unknown>): { events: AuditEvent[]; bytes: number } {
  const stored = item.events ?? item.event;
  if (typeof stored !== "string" && !(stored instanceof Uint8Array)) return { events: [], bytes: 0 };
  let json = "";
  try {
    json =
      typeof stored === "string"
        ? stored
        : inflateRawSync(stored, { maxOutputLength: PACK_MAX_BYTES }).toString("utf8");
    const parsed = JSON.parse(json) as unknown;
    const events = (Array.isArray(parsed) ? parsed : [parsed]).filter(
      (event): event is AuditEvent =>
        typeof event === "object" && event !== null && typeof (event as AuditEvent).id === "string",
    );
    return { events, bytes: json.length };
  } catch {
    return { events: [], bytes: json.length || stored.length };
  }
}
