import { type AuditEvent, auditEventId } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { AUDIT_READ_BUDGET, auditItem, auditWalk, idTime, lowestIdAt, walkAudit } from "./audit";

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

/** A read over `events` as a day partition holds them, counting requests. */
function reader(events: AuditEvent[]) {
  const sorted = [...events].sort((a, b) => (a.id < b.id ? 1 : -1));
  const calls = { requests: 0 };
  const read = async (day: string, range: { lower: string; upper: string }, limit: number) => {
    calls.requests++;
    const inRange = sorted.filter(
      (e) => e.id >= range.lower && e.id <= range.upper && e.at.slice(0, 10) === day,
    );
    return {
      items: inRange.slice(0, limit).map((e) => ({ id: e.id, event: e, bytes: JSON.stringify(e).length })),
      more: inRange.length > limit,
    };
  };
  return { read, calls };
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
      return { ...got, items: got.items.map((item, i) => (i === 0 ? { ...item, event: undefined } : item)) };
    };
    const page = await walkAudit({ since: start, until: start + 10 }, { limit: 1 }, damaged);
    expect(page).toEqual({ events: [events[1]], cursor: events[1]?.id });
  });

  it("an item expires the retention after its event ended, and is indexed by server only when it has one", () => {
    const at = Date.UTC(2026, 4, 5, 6, 7, 8);
    const onServer = auditItem(event(at, { serverId: "s1" }), 30);
    expect(onServer).toMatchObject({
      pk: "AUDIT#2026-05-05",
      kind: "AUDIT#s1#2026-05-05",
      expiresAt: at / 1000 + 30 * 86_400,
    });
    expect(onServer.sk).toBe(onServer.kindSort);
    expect(idTime(String(onServer.sk))).toBe(at);
    expect(auditItem(event(at), 1)).not.toHaveProperty("kind");
  });
});
