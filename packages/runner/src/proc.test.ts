import { describe, expect, it } from "vitest";
import { parseProcStat } from "./proc";

describe("parseProcStat", () => {
  it("reads state, group, session, CPU ticks, threads and resident pages, whatever the command name", () => {
    const line =
      "4242 (evil) (name) S 1 4242 4240 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 11 0 12345 734003200 10240 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    expect(parseProcStat(line)).toEqual({
      pid: 4242,
      state: "S",
      pgrp: 4242,
      session: 4240,
      ticks: 210,
      threads: 11,
      rssPages: 10240,
      startTicks: 12345,
      startedAt: 123.45,
    });
  });

  it("refuses a truncated line", () => {
    expect(parseProcStat("4242 (x) S 1 4242")).toBeUndefined();
  });
});
