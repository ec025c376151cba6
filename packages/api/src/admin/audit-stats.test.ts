import type { AuditEvent } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { readBounded } from "./audit-stats";

function events(count: number, from = 0): AuditEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    id: String(from + i),
    at: new Date(0).toISOString(),
    type: "call" as const,
    principal: { kind: "admin" as const },
    plane: "rest" as const,
    outcome: "ok",
    durationMs: 1,
  }));
}

/** Pages of `size` over `total` events, the cursor being the next offset. */
function pages(total: number, size: number) {
  const asked: Array<string | undefined> = [];
  const next = async (cursor: string | undefined) => {
    asked.push(cursor);
    const from = Number(cursor ?? 0);
    const count = Math.min(size, total - from);
    return { events: events(count, from), cursor: from + count < total ? String(from + count) : null };
  };
  return { asked, next };
}

describe("readBounded", () => {
  it("reads every page to the last, whole", async () => {
    const { asked, next } = pages(1_200, 500);
    const read = await readBounded(next);
    expect(read.events.map((event) => event.id)).toEqual(events(1_200).map((event) => event.id));
    expect(read.partial).toBe(false);
    expect(asked).toEqual([undefined, "500", "1000"]);
  });

  it("stops at the event bound, partial", async () => {
    const { asked, next } = pages(10_000, 500);
    const read = await readBounded(next, { maxEvents: 1_000, budgetMs: 60_000 });
    expect(read.events).toHaveLength(1_000);
    expect(read.partial).toBe(true);
    expect(asked).toHaveLength(2);
    const cut = await readBounded(pages(600, 600).next, { maxEvents: 500, budgetMs: 60_000 });
    expect(cut).toMatchObject({ partial: true, events: { length: 500 } });
  });

  it("stops when its time is spent, partial", async () => {
    let now = 0;
    const { asked, next } = pages(10_000, 500);
    const read = await readBounded(
      async (cursor) => {
        now += 2_000;
        return next(cursor);
      },
      { maxEvents: 20_000, budgetMs: 5_000 },
      () => now,
    );
    expect(asked).toHaveLength(3);
    expect(read).toMatchObject({ partial: true, events: { length: 1_500 } });
  });
});
