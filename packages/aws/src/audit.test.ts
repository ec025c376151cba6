import { deflateRawSync } from "node:zlib";
import { type AuditEvent, auditEventId } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import {
  AUDIT_PACK,
  AUDIT_READ_BUDGET,
  type AuditPack,
  auditDay,
  auditEntry,
  auditPackItem,
  auditPacks,
  auditWalk,
  idTime,
  lowestIdAt,
  storedEvents,
  walkAudit,
} from "./audit";

/** The packs of `events`, as a writer's entries of them make. */
const packsOf = (events: AuditEvent[]) => auditPacks(events.map(auditEntry));

const event = (at: number, fields: Partial<AuditEvent> = {}): AuditEvent => ({
  id: auditEventId(at),
  at: new Date(at).toISOString(),
  type: "call",
  principal: { kind: "admin" },
  plane: "rest",
  outcome: "ok",
  durationMs: 1,
  ...fields,
});

/** A read over `events` as a day partition holds them (one event an item), counting requests. */
function reader(events: AuditEvent[]) {
  return packReader(
    events.map((e) => ({ day: e.at.slice(0, 10), serverId: undefined, sk: e.id, json: JSON.stringify([e]) })),
  );
}

/** A read over `packs` as a day partition holds them, counting requests. */
function packReader(packs: AuditPack[]) {
  const sorted = [...packs].sort((a, b) => (a.sk < b.sk ? 1 : -1));
  const calls = { requests: 0 };
  const read = async (day: string, range: { lower: string; upper: string }, limit: number) => {
    calls.requests++;
    const inRange = sorted.filter((p) => p.sk >= range.lower && p.sk <= range.upper && p.day === day);
    return {
      items: inRange.slice(0, limit).map((p) => ({ id: p.sk, ...storedEvents({ events: p.json }) })),
      more: inRange.length > limit,
    };
  };
  return { read, calls };
}

/** Every page of a walk, followed by its cursors. */
async function allPages(
  filter: Parameters<typeof walkAudit>[0],
  limit: number,
  read: Parameters<typeof walkAudit>[2],
): Promise<AuditEvent[]> {
  const seen: AuditEvent[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await walkAudit(filter, { limit, ...(cursor === undefined ? {} : { cursor }) }, read);
    seen.push(...page.events);
    if (page.cursor === null) return seen;
    cursor = page.cursor;
  }
  throw new Error("the walk did not end");
}

describe("the audit walk", () => {
  it("walks the days from until's back to since's, and a cursor starts it lower", () => {
    const since = Date.UTC(2026, 0, 1, 12);
    const until = Date.UTC(2026, 0, 3, 1);
    expect(auditWalk({ since, until }, undefined).days).toEqual(["2026-01-03", "2026-01-02", "2026-01-01"]);
    // A cursor at the first id of Jan 3: the newest id below it is on Jan 2.
    expect(auditWalk({ since, until }, lowestIdAt(Date.UTC(2026, 0, 3))).days).toEqual([
      "2026-01-02",
      "2026-01-01",
    ]);
    expect(auditWalk({ since: until + 1, until }, undefined).days).toEqual([]);
    // Never more days than a query may make requests.
    expect(auditWalk({ since: 0, until }, undefined)).toMatchObject({ more: true });
    expect(auditWalk({ since: 0, until }, undefined).days).toHaveLength(AUDIT_READ_BUDGET.requests);
    expect(auditWalk({ since, until }, undefined).more).toBe(false);
    // An until after now walks from now.
    const now = Date.UTC(2026, 0, 3, 1);
    expect(auditWalk({ since, until: now + 90 * 86_400_000 }, undefined, now).days).toEqual([
      "2026-01-03",
      "2026-01-02",
      "2026-01-01",
    ]);
  });

  it("a range of more days than one query walks ends its page with a cursor to the older days", async () => {
    const start = Date.UTC(2025, 0, 1);
    const events = [event(start + 1), event(start + 70 * 86_400_000)];
    const { read } = reader(events);
    const filter = { since: start, until: start + 71 * 86_400_000 };
    const first = await walkAudit(filter, { limit: 10 }, read);
    expect(first.events).toEqual([events[1]]);
    expect(first.cursor).not.toBeNull();
    const second = await walkAudit(filter, { limit: 10, cursor: first.cursor ?? "" }, read);
    expect(second).toEqual({ events: [events[0]], cursor: null });
  });

  it("stops within its item budget with a cursor that goes on with no gap or duplicate", async () => {
    const start = Date.UTC(2026, 0, 1);
    // Many events, one match in the middle and one at the oldest end.
    const events = Array.from({ length: AUDIT_READ_BUDGET.items + 700 }, (_, i) =>
      event(start + i, i === 10 || i === 1_500 ? { outcome: "tool_error" } : {}),
    );
    const { read, calls } = reader(events);
    const filter = { since: start, until: start + 10_000, outcome: "tool_error" };
    const first = await walkAudit(filter, { limit: 10 }, read);
    // The budget runs out before the oldest match: a page with what it found and a cursor.
    expect(first.events.map((e) => e.id)).toEqual([events[1_500]?.id]);
    expect(first.cursor).not.toBeNull();
    expect(calls.requests).toBeLessThanOrEqual(AUDIT_READ_BUDGET.requests);
    const second = await walkAudit(filter, { limit: 10, cursor: first.cursor ?? "" }, read);
    expect(second).toEqual({ events: [events[10]], cursor: null });
  });

  it("the limit ends a page at its last event; damaged items are passed over", async () => {
    const start = Date.UTC(2026, 0, 1);
    const events = [event(start + 1), event(start + 2), event(start + 3)];
    const { read } = reader(events);
    const damaged = async (...args: Parameters<typeof read>) => {
      const got = await read(...args);
      return { ...got, items: got.items.map((item, i) => (i === 0 ? { ...item, events: [] } : item)) };
    };
    const page = await walkAudit({ since: start, until: start + 10 }, { limit: 1 }, damaged);
    expect(page).toEqual({ events: [events[1]], cursor: events[1]?.id });
  });

  it("an item expires the retention after its newest event ended, and is indexed by server only when it has one", () => {
    const at = Date.UTC(2026, 4, 5, 6, 7, 8);
    const [onServer] = packsOf([event(at - 5, { serverId: "s1" }), event(at, { serverId: "s1" })]).map(
      (pack) => auditPackItem(pack, 30),
    );
    expect(onServer).toMatchObject({
      pk: "AUDIT#2026-05-05",
      kind: "AUDIT#s1#2026-05-05",
      expiresAt: at / 1000 + 30 * 86_400,
    });
    expect(onServer?.sk).toBe(onServer?.kindSort);
    expect(idTime(String(onServer?.sk))).toBe(at);
    expect(auditPackItem(packsOf([event(at)])[0]!, 1)).not.toHaveProperty("kind");
  });
});

describe("auditDay", () => {
  it("names each instant's UTC day, across midnight and back", () => {
    const midnight = Date.UTC(2026, 11, 7);
    const days = [midnight - 1, midnight, midnight + 86_399_999, midnight + 86_400_000, midnight - 1, 0];
    expect(days.map(auditDay)).toEqual([
      "2026-12-06",
      "2026-12-07",
      "2026-12-07",
      "2026-12-08",
      "2026-12-06",
      "1970-01-01",
    ]);
  });
});

describe("audit packs", () => {
  it("hold one day's events of one server, newest first, within the pack's bounds", () => {
    const start = Date.UTC(2026, 0, 1, 23, 59, 59, 0);
    const events = [
      event(start, { serverId: "a" }),
      event(start + 1, { serverId: "b" }),
      event(start + 2, { serverId: "a" }),
      event(start + 1_500, { serverId: "a" }), // the next day
      event(start + 2, {}),
    ];
    const packs = packsOf(events);
    const contents = packs.map((pack) => ({
      day: pack.day,
      server: pack.serverId,
      ids: storedEvents({ events: pack.json }).events.map((e) => e.id),
    }));
    expect(contents).toEqual(
      expect.arrayContaining([
        { day: "2026-01-01", server: "a", ids: [events[2]?.id, events[0]?.id] },
        { day: "2026-01-01", server: "b", ids: [events[1]?.id] },
        { day: "2026-01-02", server: "a", ids: [events[3]?.id] },
        { day: "2026-01-01", server: undefined, ids: [events[4]?.id] },
      ]),
    );
    expect(packs).toHaveLength(4);
    // The same events make the same packs (a retried write overwrites the first try's).
    const bySk = (all: AuditPack[]) => [...all].sort((a, b) => (a.sk < b.sk ? -1 : 1));
    expect(bySk(packsOf([...events].reverse()))).toEqual(bySk(packs));
  });

  it("are cut at their count, their size and their span", () => {
    const start = Date.UTC(2026, 0, 1);
    const many = Array.from({ length: AUDIT_PACK.events + 1 }, (_, i) => event(start + i));
    expect(packsOf(many).map((p) => storedEvents({ events: p.json }).events.length)).toEqual([100, 1]);
    const big = Array.from({ length: 8 }, (_, i) => event(start + i, { argumentKeys: ["x".repeat(10_000)] }));
    for (const pack of packsOf(big)) expect(pack.json.length).toBeLessThanOrEqual(AUDIT_PACK.chars);
    expect(packsOf(big).length).toBeGreaterThan(1);
    const apart = [event(start), event(start + AUDIT_PACK.spanMs + 1)];
    expect(packsOf(apart)).toHaveLength(2);
  });

  it("overlapping in time (processes, servers), read page by page: every event once, newest first", async () => {
    const start = Date.UTC(2026, 0, 1, 23, 59, 50);
    // Three writers' events over 20 s (across midnight), each writer's flushed in packs of random size.
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const all: AuditEvent[] = [];
    const packs: AuditPack[] = [];
    for (let writer = 0; writer < 3; writer++) {
      const mine = Array.from({ length: 400 }, () =>
        event(start + Math.floor(random() * 20_000), {
          serverId: `s${writer}`,
          outcome: random() < 0.2 ? "tool_error" : "ok",
        }),
      ).sort((a, b) => (a.id < b.id ? -1 : 1));
      all.push(...mine);
      for (let i = 0; i < mine.length; ) {
        const size = 1 + Math.floor(random() * 30);
        packs.push(...packsOf(mine.slice(i, i + size)));
        i += size;
      }
    }
    const newestFirst = [...all].sort((a, b) => (a.id < b.id ? 1 : -1));
    const { read } = packReader(packs);
    const filter = { since: start, until: start + 20_000 };
    for (const limit of [1, 7, 50, 1_000])
      expect((await allPages(filter, limit, read)).map((e) => e.id)).toEqual(newestFirst.map((e) => e.id));
    const errors = newestFirst.filter((e) => e.outcome === "tool_error").map((e) => e.id);
    expect((await allPages({ ...filter, outcome: "tool_error" }, 5, read)).map((e) => e.id)).toEqual(errors);
    // A time range inside the packs' spans: only its events.
    const inside = { since: start + 5_000, until: start + 6_000 };
    expect((await allPages(inside, 3, read)).map((e) => e.id)).toEqual(
      newestFirst
        .filter((e) => idTime(e.id) >= inside.since && idTime(e.id) <= inside.until)
        .map((e) => e.id),
    );
  });

  it("more one-event items within a pack's span than a page's item budget: paging still gets through", async () => {
    const start = Date.UTC(2026, 0, 1);
    // Lambda's way: every event an item of its own, 3,000 of them in 1.5 s.
    const events = Array.from({ length: 3_000 }, (_, i) => event(start + Math.floor(i / 2)));
    const { read } = packReader(events.flatMap((e) => packsOf([e])));
    const seen = await allPages({ since: start, until: start + 2_000 }, 1_000, read);
    expect(seen.map((e) => e.id)).toEqual([...events].reverse().map((e) => e.id));
  });

  it("packs reaching over a page's top from above, more than a page's budget: paging still gets through", async () => {
    const until = Date.UTC(2026, 0, 1, 12);
    // 25 servers, each a pack of 100 events over the 2 s around `until`, and older events one an item.
    const packs: AuditPack[] = [];
    const all: AuditEvent[] = [];
    for (let server = 0; server < 25; server++) {
      const mine = Array.from({ length: 100 }, (_, i) =>
        event(until - 990 + i * 20, { serverId: `s${server}` }),
      );
      all.push(...mine);
      packs.push(...packsOf(mine));
    }
    const older = Array.from({ length: 300 }, (_, i) => event(until - 60_000 + i));
    all.push(...older);
    packs.push(...older.flatMap((e) => packsOf([e])));
    const { read } = packReader(packs);
    const filter = { since: until - 60_000, until };
    const expected = all
      .filter((e) => idTime(e.id) <= until)
      .sort((a, b) => (a.id < b.id ? 1 : -1))
      .map((e) => e.id);
    for (const limit of [100, 1_000])
      expect((await allPages(filter, limit, read)).map((e) => e.id)).toEqual(expected);
  });

  it("an event written twice (a batch split after a failure) is read once", async () => {
    const start = Date.UTC(2026, 0, 1);
    const events = [event(start), event(start + 1), event(start + 2)];
    // The pack of three was written, then each event alone; the newest one's item replaced the pack.
    const packs = [...packsOf(events), ...events.slice(0, 2).flatMap((e) => packsOf([e]))];
    const { read } = packReader(packs);
    const seen = await allPages({ since: start, until: start + 10 }, 1, read);
    expect(seen.map((e) => e.id)).toEqual([events[2]?.id, events[1]?.id, events[0]?.id]);
  });

  it("a pack is stored deflated and read back whole; one stored as a string (before) reads the same", () => {
    const at = Date.UTC(2026, 4, 5, 6, 7, 8);
    const events = Array.from({ length: 100 }, (_, i) => event(at + i, { serverId: "s1" }));
    const [pack] = packsOf(events);
    const item = auditPackItem(pack!, 30);
    expect(item.events).toBeInstanceOf(Uint8Array);
    expect((item.events as Uint8Array).length).toBeLessThan(pack!.json.length / 3);
    const read = storedEvents(item);
    expect(read.events.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
    expect(read.bytes).toBe(pack!.json.length);
    expect(storedEvents({ ...item, events: pack!.json })).toEqual(read);
  });

  it("the largest packs written read back whole: a full pack of 3-byte characters, a shortened event of escapes", () => {
    const at = Date.UTC(2026, 4, 5, 6, 7, 8);
    const wide = packsOf(
      Array.from({ length: 100 }, (_, i) => event(at + i, { serverId: "s1", tool: "語".repeat(600) })),
    );
    expect(wide.length).toBeGreaterThan(1);
    for (const pack of wide) expect(storedEvents(auditPackItem(pack, 1)).events.length).toBeGreaterThan(0);
    const escapes = "\u0001".repeat(300); // clipped to 256, each 6 characters as JSON
    const worst = event(at, {
      argumentKeys: Array.from({ length: 64 }, (_, i) => `${i}${escapes}`),
      fields: Array.from({ length: 64 }, (_, i) => `${i}${escapes}`),
      ...Object.fromEntries(["source", "serverName", "tool", "toolset"].map((name) => [name, escapes])),
    });
    const [pack] = packsOf([worst]);
    expect(pack!.json.length).toBeGreaterThan(3 * AUDIT_PACK.chars);
    expect(storedEvents(auditPackItem(pack!, 1)).events).toHaveLength(1);
  });

  it("a damaged deflated pack, or one inflating past a pack's bound, is read as no events", () => {
    expect(storedEvents({ events: new Uint8Array([1, 2, 3, 4]) }).events).toEqual([]);
    const bomb = deflateRawSync(`[${'"x",'.repeat(1_100_000)}"x"]`);
    expect(bomb.length).toBeLessThan(16 * 1024);
    expect(storedEvents({ events: bomb })).toEqual({ events: [], bytes: bomb.length });
  });

  it("an item of one event, as written before packs, is read as a pack of one", () => {
    const one = event(Date.UTC(2026, 0, 1));
    expect(storedEvents({ event: JSON.stringify(one) }).events).toEqual([one]);
    expect(storedEvents({ events: "[not json" }).events).toEqual([]);
    expect(storedEvents({}).events).toEqual([]);
  });
});
