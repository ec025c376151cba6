import { describe, expect, it } from "vitest";
import { limitGaps } from "./limits";

describe("limitGaps", () => {
  it("names what is only watched: everything without prlimit, processes when children share a uid", () => {
    expect(limitGaps(true, "/usr/bin/prlimit")).toEqual([]);
    expect(limitGaps(false, "/usr/bin/prlimit")).toEqual([expect.stringMatching(/process limit is watched/)]);
    expect(limitGaps(true, undefined)).toEqual([expect.stringMatching(/prlimit is not available/)]);
  });
});
