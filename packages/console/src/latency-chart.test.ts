import { describe, expect, it } from "vitest";
import { LABEL_CHAR, plotLeft, roundTop } from "./latency-chart";

describe("chart axes", () => {
  it("tops the value axis at a round value at or above the largest", () => {
    expect([0, 0.4, 1, 7, 12, 95, 101, 5_391, 9_000, 12_345].map(roundTop)).toEqual([
      1, 0.4, 1, 8, 15, 100, 150, 6_000, 10_000, 15_000,
    ]);
  });

  it("leaves room left of the axis for its longest label: a 4- or 5-digit one is not clipped", () => {
    for (const label of ["0 ms", "6000 ms", "15000 ms", "100 %"])
      expect(plotLeft(label) - 4 - label.length * LABEL_CHAR).toBeGreaterThanOrEqual(0);
    expect(plotLeft("8 ms")).toBe(44);
  });
});
