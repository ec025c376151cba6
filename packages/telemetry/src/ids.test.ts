import { describe, expect, it } from "vitest";
import { CryptoIdGenerator } from "./ids";

describe("CryptoIdGenerator", () => {
  it("gives distinct lowercase hex ids of W3C length across many pool refills", () => {
    const ids = new CryptoIdGenerator();
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      traces.add(ids.generateTraceId());
      spans.add(ids.generateSpanId());
    }
    expect(traces.size).toBe(5_000);
    expect(spans.size).toBe(5_000);
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });

  it("spreads its digits evenly (each hex digit about 1/16 of 320,000)", () => {
    const ids = new CryptoIdGenerator();
    const counts = new Map<string, number>();
    for (let i = 0; i < 10_000; i++)
      for (const digit of ids.generateTraceId()) counts.set(digit, (counts.get(digit) ?? 0) + 1);
    expect(counts.size).toBe(16);
    for (const count of counts.values()) expect(Math.abs(count - 20_000)).toBeLessThan(1_500);
  });
});
