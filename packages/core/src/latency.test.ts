import { describe, expect, it } from "vitest";
import { callsPoint, LATENCY_RINGS, latencySlot, latencyWindowMs, recentPoints } from "./latency";

describe("latency rings", () => {
  it("a point one whole ring later lands in the same slot; the next grain in the next one", () => {
    const at = Date.UTC(2026, 0, 1, 12, 0, 30);

    expect(latencySlot("probe", at + latencyWindowMs("probe"))).toBe(latencySlot("probe", at));
    expect(latencySlot("probe", at + 60_000)).toBe((latencySlot("probe", at) + 1) % 120);
    expect(latencySlot("calls", at + 10_000)).toBe((latencySlot("calls", at) + 1) % 120);
    expect(latencyWindowMs("probe")).toBe(2 * 3600_000);
    expect(latencyWindowMs("calls")).toBe(20 * 60_000);
    expect(LATENCY_RINGS.calls.slots).toBe(120);
  });

  it("drops points older than their kind's window and sorts the rest by time", () => {
    const now = Date.UTC(2026, 0, 1, 12);
    const probe = (at: number) => ({ at, kind: "probe" as const, ms: 5, ok: true });
    const calls = (at: number) => ({ at, kind: "calls" as const, ms: 2, ok: true, count: 1, errors: 0 });

    const kept = recentPoints(
      [
        probe(now - 60_000),
        calls(now - 20 * 60_000),
        probe(now - 2 * 3600_000),
        calls(now - 30 * 60_000 + 1),
        probe(now - 30 * 60_000),
        calls(now - 10_000),
      ],
      now,
    );

    expect(kept.map((point) => [point.kind, (now - point.at) / 1000])).toEqual([
      ["probe", 1800],
      ["probe", 60],
      ["calls", 10],
    ]);
  });
});

describe("callsPoint", () => {
  it("sums up a slot: median, max, count and errors; ok only when none failed", () => {
    expect(callsPoint(1_000, [9, 1, 3, 2.04], 4, 0, 9)).toEqual({
      at: 1_000,
      kind: "calls",
      ms: 2,
      ok: true,
      count: 4,
      errors: 0,
      maxMs: 9,
    });
    expect(callsPoint(1_000, [4, 1, 3], 5, 1, 12.345)).toMatchObject({ ms: 3, ok: false, maxMs: 12.3 });
  });
});
