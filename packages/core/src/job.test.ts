import { describe, expect, it } from "vitest";
import { isOvertakenRetry, Job, MAX_JOB_DELAY_SECONDS, sweepDelaySeconds } from "./job";

describe("Job", () => {
  it("accepts the four kinds with a generation, and a retry's scheduling time", () => {
    expect(Job.parse({ type: "check", serverId: "s", generation: 2 })).toMatchObject({ type: "check" });
    expect(
      Job.parse({ type: "retry", serverId: "s", generation: 3, after: "2026-01-01T00:00:00.000Z" }),
    ).toMatchObject({
      after: "2026-01-01T00:00:00.000Z",
    });
    expect(Job.safeParse({ type: "bogus", serverId: "s", generation: 1 }).success).toBe(false);
    expect(Job.safeParse({ type: "probe", serverId: "s", generation: -1 }).success).toBe(false);
    expect(Job.safeParse({ type: "probe", serverId: "s", generation: 1, extra: true }).success).toBe(false);
  });

  it("drops a retry overtaken by a later attempt, so one server has one retry chain", () => {
    const retry: Job = { type: "retry", serverId: "s", generation: 1, after: "2026-01-01T00:00:00.000Z" };

    expect(isOvertakenRetry(retry, "2026-01-01T00:00:00.000Z")).toBe(false);
    expect(isOvertakenRetry(retry, null)).toBe(false);
    expect(isOvertakenRetry(retry, "2026-01-01T00:00:05.000Z")).toBe(true);
    expect(isOvertakenRetry({ ...retry, type: "probe" }, "2026-01-01T00:00:05.000Z")).toBe(false);
    expect(
      isOvertakenRetry({ type: "retry", serverId: "s", generation: 1 }, "2026-01-01T00:00:05.000Z"),
    ).toBe(false);
  });
});

describe("sweepDelaySeconds", () => {
  const ids = Array.from({ length: 200 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);

  it("gives each server a stable offset within the interval, spread across it", () => {
    const delays = ids.map((id) => sweepDelaySeconds(id, 60));

    expect(ids.map((id) => sweepDelaySeconds(id, 60))).toEqual(delays);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...delays)).toBeLessThan(60);
    // 200 servers over 60 one-second slots: most slots used, none crowded
    const perSlot = new Map<number, number>();
    for (const delay of delays) perSlot.set(delay, (perSlot.get(delay) ?? 0) + 1);
    expect(perSlot.size).toBeGreaterThan(45);
    expect(Math.max(...perSlot.values())).toBeLessThan(12);
  });

  it("sends at once without an interval, and never past SQS's 900 s", () => {
    expect(ids.map((id) => sweepDelaySeconds(id, 0))).toEqual(ids.map(() => 0));
    expect(Math.max(...ids.map((id) => sweepDelaySeconds(id, 3_600)))).toBeLessThan(MAX_JOB_DELAY_SECONDS);
  });
});
