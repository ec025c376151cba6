import { describe, expect, it } from "vitest";
import { isOvertakenRetry, Job } from "./job";

describe("Job", () => {
  it("accepts the three kinds with a generation, and a retry's scheduling time", () => {
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
