/**
 * How much of its memory limit the runner's task (its cgroup: the runner and every child) uses: the
 * working set — usage less the inactive page cache, which the kernel reclaims before it kills — over the
 * limit. Read from cgroup v2 (`memory.current`, `memory.max`) or v1 (`memory/memory.usage_in_bytes`,
 * `memory/memory.limit_in_bytes`), as Fargate and hosts give one or the other.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A v1 limit this large is none (the kernel's "unlimited" is a page-rounded 2^63). */
const NO_LIMIT = 2 ** 60;

/**
 * The fraction (0–1) of the memory limit in use: the cgroup's own limit, else `fallbackLimit` (bytes: a
 * Fargate task's, whose container cgroup has no limit of its own); undefined without a limit or a cgroup.
 */
export function memoryUse(root = "/sys/fs/cgroup", fallbackLimit?: number): number | undefined {
  const read =
    readUse(root, "memory.current", "memory.max", "inactive_file") ??
    readUse(join(root, "memory"), "memory.usage_in_bytes", "memory.limit_in_bytes", "total_inactive_file");
  if (!read) return undefined;
  const limit = read.limit ?? fallbackLimit;
  return limit !== undefined && limit > 0 ? read.workingSet / limit : undefined;
}

function readUse(
  dir: string,
  usageFile: string,
  limitFile: string,
  inactiveField: string,
): { workingSet: number; limit: number | undefined } | undefined {
  const usage = Number(readText(join(dir, usageFile)));
  const limitText = readText(join(dir, limitFile));
  if (!Number.isFinite(usage) || limitText === undefined) return undefined;
  const limit = Number(limitText); // NaN for v2's "max"
  const stat = readText(join(dir, "memory.stat")) ?? "";
  const inactive = Number(new RegExp(`^${inactiveField} (\\d+)$`, "m").exec(stat)?.[1] ?? 0);
  return {
    workingSet: Math.max(0, usage - inactive),
    limit: limit > 0 && limit < NO_LIMIT ? limit : undefined,
  };
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}
