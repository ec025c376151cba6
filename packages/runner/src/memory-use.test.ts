import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryUse } from "./memory-use";

const MIB = 1024 * 1024;
let root: string | undefined;

/** A fake cgroup root holding `files` (relative path → content). */
function cgroup(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "mcpgw-cgroup-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), `${content}\n`);
  }
  return root;
}

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe("memoryUse", () => {
  it("reads cgroup v2: the working set (usage less inactive file cache) over the limit", () => {
    const dir = cgroup({
      "memory.current": String(900 * MIB),
      "memory.max": String(1024 * MIB),
      "memory.stat": `anon ${500 * MIB}\ninactive_file ${388 * MIB}\nactive_file 0`,
    });
    expect(memoryUse(dir)).toBeCloseTo(0.5);
  });

  it("reads cgroup v1 when v2 is absent, with its hierarchical inactive file cache", () => {
    const dir = cgroup({
      "memory/memory.usage_in_bytes": String(800 * MIB),
      "memory/memory.limit_in_bytes": String(1000 * MIB),
      "memory/memory.stat": `inactive_file 0\ntotal_inactive_file ${100 * MIB}`,
    });
    expect(memoryUse(dir)).toBeCloseTo(0.7);
  });

  it("takes the task's limit when the container's cgroup has none of its own (Fargate)", () => {
    const dir = cgroup({
      "memory.current": String(512 * MIB),
      "memory.max": "max",
      "memory.stat": "inactive_file 0",
    });
    expect(memoryUse(dir, 1024 * MIB)).toBeCloseTo(0.5);
    expect(memoryUse(cgroup({}), 1024 * MIB)).toBeUndefined();
  });

  it("has no answer without a limit (v2 `max`, v1's near-2^63) or without a cgroup", () => {
    expect(memoryUse(cgroup({ "memory.current": "1000", "memory.max": "max" }))).toBeUndefined();
    expect(
      memoryUse(
        cgroup({
          "memory/memory.usage_in_bytes": "1000",
          "memory/memory.limit_in_bytes": "9223372036854771712",
        }),
      ),
    ).toBeUndefined();
    expect(memoryUse(cgroup({}))).toBeUndefined();
  });
});
