import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { LimitWatch, limitGaps } from "./limits";

describe("limitGaps", () => {
  it("names what is only watched: everything without prlimit, processes when children share a uid", () => {
    expect(limitGaps(true, "/usr/bin/prlimit")).toEqual([]);
    expect(limitGaps(false, "/usr/bin/prlimit")).toEqual([expect.stringMatching(/process limit is watched/)]);
    expect(limitGaps(true, undefined)).toEqual([expect.stringMatching(/prlimit is not available/)]);
  });
});

describe("LimitWatch", () => {
  it("calls back once, with the limit and the use, when a real child passes its memory limit", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
      detached: true,
      stdio: "ignore",
    });
    const watch = new LimitWatch(50);
    try {
      await new Promise((resolve) => child.once("spawn", resolve));
      const passed = await new Promise<unknown[]>((resolve) => {
        watch.watch(child.pid as number, { cpuSeconds: 0, memoryMiB: 16, processes: 1_000 }, (...args) =>
          resolve(args),
        );
      });
      expect(passed).toEqual(["memory", expect.objectContaining({ tasks: expect.any(Number) })]);
      expect((passed[1] as { memoryBytes: number }).memoryBytes).toBeGreaterThan(16 * 1024 * 1024);
    } finally {
      watch.close();
      child.kill("SIGKILL");
    }
  });
});
