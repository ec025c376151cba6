import { describe, expect, it } from "vitest";
import {
  ChildLimits,
  DEFAULT_CHILD_LIMITS,
  limitMessage,
  passedLimit,
  resolveLimits,
  rlimitOptions,
} from "./child-limits";
import { StdioServerSpec } from "./server";

const limits = { cpuSeconds: 10, memoryMiB: 256, processes: 64 };

describe("child limits", () => {
  it("a server's own limits override the runner's defaults field by field", () => {
    expect(resolveLimits(undefined, DEFAULT_CHILD_LIMITS)).toEqual(DEFAULT_CHILD_LIMITS);
    expect(resolveLimits({ memoryMiB: 128, cpuSeconds: 0 }, DEFAULT_CHILD_LIMITS)).toEqual({
      ...DEFAULT_CHILD_LIMITS,
      memoryMiB: 128,
      cpuSeconds: 0,
    });
  });

  it("are optional on a stdio spec, whole non-negative numbers, and no other field", () => {
    const base = { name: "files", command: "node" };
    expect(StdioServerSpec.parse({ ...base, limits: { memoryMiB: 64 } }).limits).toEqual({ memoryMiB: 64 });
    expect(StdioServerSpec.parse(base).limits).toBeUndefined();
    for (const bad of [{ memoryMiB: -1 }, { cpuSeconds: 1.5 }, { threads: 3 }, { processes: "9" }])
      expect(ChildLimits.safeParse(bad).success).toBe(false);
  });

  it("a usage passes a limit only above it; 0 is no limit", () => {
    const at = { cpuSeconds: 10, memoryBytes: 256 * 1024 * 1024, tasks: 64 };
    expect(passedLimit(at, limits)).toBeUndefined();
    expect(passedLimit({ ...at, memoryBytes: at.memoryBytes + 1 }, limits)).toBe("memory");
    expect(passedLimit({ ...at, cpuSeconds: 10.01 }, limits)).toBe("cpu");
    expect(passedLimit({ ...at, tasks: 65 }, limits)).toBe("processes");
    expect(
      passedLimit(
        { cpuSeconds: 1e6, memoryBytes: 1e12, tasks: 1e5 },
        { cpuSeconds: 0, memoryMiB: 0, processes: 0 },
      ),
    ).toBeUndefined();
  });

  it("says which limit was passed, with its value", () => {
    expect(limitMessage("memory", limits)).toBe(
      "the server passed its memory limit (256 MiB) and was stopped",
    );
    expect(limitMessage("cpu", limits)).toBe("the server passed its CPU time limit (10 s) and was stopped");
    expect(limitMessage("processes", limits)).toBe(
      "the server passed its process limit (64 processes and threads) and was stopped",
    );
  });

  it("the kernel caps: CPU with a second's grace, data at twice the memory, tasks only under a uid of its own", () => {
    expect(rlimitOptions(limits, true)).toEqual(["--cpu=10:11", `--data=${512 * 1024 * 1024}`, "--nproc=65"]);
    expect(rlimitOptions(limits, false)).toEqual(["--cpu=10:11", `--data=${512 * 1024 * 1024}`]);
    expect(rlimitOptions({ cpuSeconds: 0, memoryMiB: 0, processes: 0 }, true)).toEqual([]);
  });
});
