import { describe, expect, it } from "vitest";
import { limitGaps, parseProcStat } from "./limits";

describe("parseProcStat", () => {
  it("reads state, group, session, CPU ticks, threads and resident pages, whatever the command name", () => {
    const line =
      "4242 (evil) (name) S 1 4242 4240 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 11 0 12345 734003200 10240 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    expect(parseProcStat(line)).toEqual({
      state: "S",
      pgrp: 4242,
      session: 4240,
      ticks: 210,
      threads: 11,
      rssPages: 10240,
    });
  });

  it("refuses a truncated line", () => {
    expect(parseProcStat("4242 (x) S 1 4242")).toBeUndefined();
  });
});

describe("limitGaps", () => {
  it("names what is only watched: everything without prlimit, processes when children share a uid", () => {
    expect(limitGaps(true, "/usr/bin/prlimit")).toEqual([]);
    expect(limitGaps(false, "/usr/bin/prlimit")).toEqual([expect.stringMatching(/process limit is watched/)]);
    expect(limitGaps(true, undefined)).toEqual([expect.stringMatching(/prlimit is not available/)]);
  });
});
