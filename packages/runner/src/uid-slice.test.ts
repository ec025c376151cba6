import { describe, expect, it } from "vitest";
import { recordedUidSlices, sliceLabel, sliceStarts } from "./uid-slice";

describe("uid slices", () => {
  it("cuts the range into whole slices; a range smaller than a slice is one", () => {
    expect(sliceStarts({ base: 1_000, count: 250, size: 100 })).toEqual([1_000, 1_100]);
    expect(sliceStarts({ base: 1_000, count: 50, size: 100 })).toEqual([1_000]);
  });

  it("reads back the slices named by runner directories", () => {
    const slice = { base: 100_300, count: 100, release: async () => {} };
    const dir = `/tmp/mcpgw-runner-12-345-${sliceLabel(slice)}AbC123`;
    expect(recordedUidSlices([dir, "/tmp/mcpgw-runner-12-345-AbC123"])).toEqual([100_300]);
  });
});
