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

/** The fraction (0–1) of the cgroup's memory limit in use; undefined without a limit or a cgroup to read. */
export function memoryUse(root = "/sys/fs/cgroup"): number | undefined {
  const v2 = readUse(root, "memory.current", "memory.max", "inactive_file");
  return (
    v2 ??
    readUse(join(root, "memory"), "memory.usage_in_bytes", "memory.limit_in_bytes", "total_inactive_file")
  );
}

function readUse(
  dir: string,
  usageFile: string,
  limitFile: string,
  inactiveField: string,
): number | undefined {
  const usage = Number(read(join(dir, usageFile)));
  const limitText = read(join(dir, limitFile));
  if (!Number.isFinite(usage) || limitText === undefined || limitText === "max") return undefined;
  const limit = Number(limitText);
  if (!(limit > 0) || limit >= NO_LIMIT) return undefined;
  const stat = read(join(dir, "memory.stat")) ?? "";
  const inactive = Number(new RegExp(`^${inactiveField} (\\d+)$`, "m").exec(stat)?.[1] ?? 0);
  return Math.max(0, usage - inactive) / limit;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}
