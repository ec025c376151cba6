import { describe, expect, it } from "vitest";
import { settleAtMost } from "./settle-at-most";

describe("settleAtMost", () => {
  it("runs every task, never more than the limit at once, and settles each in order", async () => {
    let running = 0;
    let most = 0;
    const tasks = Array.from({ length: 10 }, (_, i) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5 * (i % 3)));
      running--;
      if (i === 4) throw new Error("four");
      return i;
    });
    const results = await settleAtMost(3, tasks);
    expect(most).toBe(3);
    expect(results.map((result) => (result.status === "fulfilled" ? result.value : "rejected"))).toEqual([
      0,
      1,
      2,
      3,
      "rejected",
      5,
      6,
      7,
      8,
      9,
    ]);
  });

  it("settles nothing to do at once", async () => {
    expect(await settleAtMost(4, [])).toEqual([]);
  });
});
