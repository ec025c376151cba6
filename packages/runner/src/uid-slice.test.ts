import { describe, expect, it } from "vitest";
import { claimUidSlice, recordedUidSlices, sliceLabel, sliceStarts } from "./uid-slice";

/** A range no other test (or stack) uses. */
const base = 3_000_000 + Math.floor(Math.random() * 100_000) * 1_000;

describe("uid slices", () => {
  it("cuts the range into whole slices; a range smaller than a slice is one", () => {
    expect(sliceStarts({ base: 1_000, count: 250, size: 100 })).toEqual([1_000, 1_100]);
    expect(sliceStarts({ base: 1_000, count: 50, size: 100 })).toEqual([1_000]);
  });

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

  it("reads back the slices named by runner directories", () => {
    const slice = { base: 100_300, count: 100, release: async () => {} };
    const dir = `/tmp/mcpgw-runner-12-345-${sliceLabel(slice)}AbC123`;
    expect(recordedUidSlices([dir, "/tmp/mcpgw-runner-12-345-AbC123"])).toEqual([100_300]);
  });
});
