import { describe, expect, it } from "vitest";
import type { AuditEvent } from "./audit";
import { auditStats, auditStatsRange, nearestRank } from "./audit-stats";

const NOW = Date.parse("2026-12-06T10:30:20.000Z");

function call(at: number, durationMs: number, outcome = "ok", type: AuditEvent["type"] = "call"): AuditEvent {
  return {
    id: String(at),
    at: new Date(at).toISOString(),
    type,
    principal: { kind: "admin" },
    plane: "rest",
    serverName: "docs",
    tool: "echo",
    outcome,
    durationMs,
  };
}

describe("nearestRank", () => {
  it("takes the value at rank ceil(p/100 · n)", () => {
    const sorted = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(nearestRank(sorted, 50)).toBe(10);
    expect(nearestRank(sorted, 95)).toBe(19);
    expect(nearestRank([7], 95)).toBe(7);
    expect(nearestRank([1, 2, 3], 100)).toBe(3);
    expect(nearestRank([], 50)).toBeNull();
  });
});

describe("auditStats", () => {
  it("buckets the last hour by minute, the last holding now", () => {
    const range = auditStatsRange("hour", NOW);
    expect(new Date(range.since).toISOString()).toBe("2026-12-06T09:31:00.000Z");
    const stats = auditStats([], { window: "hour", now: NOW });
    expect(stats.bucketMs).toBe(60_000);
    expect(stats.buckets).toHaveLength(60);
    expect(stats.buckets.at(-1)?.at).toBe("2026-12-06T10:30:00.000Z");
    expect(stats.totals).toEqual({
      calls: 0,
      errors: 0,
      toolErrors: 0,
      p50Ms: null,
      p95Ms: null,
      errorRate: 0,
    });
    expect(stats.partial).toBe(false);
  });

  it("buckets the last day by half hour", () => {
    const stats = auditStats([], { window: "day", now: NOW });
    expect(stats.bucketMs).toBe(1_800_000);
    expect(stats.buckets).toHaveLength(48);
    expect(stats.buckets[0]?.at).toBe("2026-12-05T11:00:00.000Z");
    expect(stats.buckets.at(-1)?.at).toBe("2026-12-06T10:30:00.000Z");
  });

  it("counts calls, errors (tool errors among them) and p50/p95 per bucket and in total", () => {
    const lastMinute = Date.parse("2026-12-06T10:30:00.000Z");
    const events = [
      ...Array.from({ length: 18 }, (_, i) => call(lastMinute + i, i + 1)),
      call(lastMinute + 100, 19, "tool_error"),
      call(lastMinute + 200, 20, "upstream.timeout"),
      call(lastMinute - 60_000, 500, "input_required"),
      // Outside the window, a change, and a time after now: none counts.
      call(auditStatsRange("hour", NOW).since - 1, 1),
      call(lastMinute + 5, 1, "ok", "change"),
      call(NOW + 1, 1),
    ];
    const stats = auditStats(events, { window: "hour", now: NOW, partial: true });
    expect(stats.buckets.at(-1)).toEqual({
      at: "2026-12-06T10:30:00.000Z",
      calls: 20,
      errors: 2,
      toolErrors: 1,
      p50Ms: 10,
      p95Ms: 19,
    });
    expect(stats.buckets.at(-2)).toMatchObject({ calls: 1, errors: 0, p50Ms: 500, p95Ms: 500 });
    expect(stats.buckets[0]).toMatchObject({ calls: 0, p50Ms: null });
    expect(stats.totals).toEqual({
      calls: 21,
      errors: 2,
      toolErrors: 1,
      errorRate: 2 / 21,
      p50Ms: 11,
      p95Ms: 20,
    });
    expect(stats.partial).toBe(true);
  });
});
