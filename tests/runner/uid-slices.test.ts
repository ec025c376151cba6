/**
 * Runners' slices of the child uid range, claimed through the kernel (an abstract unix socket each):
 * a held slice is never handed out twice, a released one is, a dead predecessor's first when asked,
 * and a slice of another size that overlaps a held one is passed over.
 */
import { claimUidSlice } from "@mcpgw/runner";
import { describe, expect, it } from "vitest";

/** A range no other test (or stack) uses. */
const base = 3_000_000 + Math.floor(Math.random() * 100_000) * 1_000;

describe("uid slices", () => {
  it("a held slice is not handed out again until released; then it is, preferred first", async () => {
    const a = await claimUidSlice({ base, count: 300, size: 100 });
    const b = await claimUidSlice({ base, count: 300, size: 100 });
    const c = await claimUidSlice({ base, count: 300, size: 100 });
    expect([a.base, b.base, c.base]).toEqual([base, base + 100, base + 200]);
    await expect(claimUidSlice({ base, count: 300, size: 100 })).rejects.toThrow(/held by a running runner/);
    await b.release();
    await a.release();
    const again = await claimUidSlice({ base, count: 300, size: 100, preferred: [base + 100] });
    expect(again.base).toBe(base + 100);
    await Promise.all([again.release(), c.release()]);
  });

  it("a slice overlapping a live one of another size is passed over", async () => {
    const wide = await claimUidSlice({ base, count: 1_000, size: 150 });
    const narrow = await claimUidSlice({ base, count: 1_000, size: 100 });
    expect(narrow.base).toBe(base + 200);
    await Promise.all([wide.release(), narrow.release()]);
  });
});
