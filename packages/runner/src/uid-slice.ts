/**
 * A runner's own slice of the child uid range, so several stacks on one host never touch each other's
 * children: the range `[base, base + count)` is cut into slices of `size` uids, and a runner holds one
 * for its whole life by binding an abstract unix socket named after it. The kernel makes the bind
 * atomic (a second runner gets EADDRINUSE) and frees the name when the runner dies, however it dies —
 * so a slice nobody holds is one whose runner is gone, and its next holder may sweep it.
 *
 * A runner's directory is named after its slice too; the next runner started on the same temp base reads
 * the names of dead runners' directories and takes one of those slices first, so a runner restarted
 * after a crash sweeps its own leftovers (or, if another took it meanwhile, whoever holds it did).
 */
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { AppError } from "@mcpgw/core";

/** The default of RUNNER_UID_SLICE: ten stacks fit in the default range of 1,000 uids. */
export const DEFAULT_UID_SLICE = 100;

const LEASE_PREFIX = "mcpgw-runner-uids-";

/** The uids one runner holds: `[base, base + count)`. */
export interface UidSlice {
  base: number;
  count: number;
  /** Gives the slice up (the runner's stop; death gives it up as well). */
  release(): Promise<void>;
}

export interface SliceOptions {
  /** The whole range the stacks of this host share (RUNNER_UID_BASE, RUNNER_UID_COUNT). */
  base: number;
  count: number;
  /** Uids per slice (RUNNER_UID_SLICE, at least twice the runner's `maxChildren`: children and thread groups). */
  size: number;
  /** First uids of slices to try first (dead predecessors' slices). */
  preferred?: number[];
}

/**
 * Claims a free slice: a preferred one if free, else the lowest. A range smaller than `size` is one
 * slice. Throws `server.unavailable` when every slice is held by a live runner.
 */
export async function claimUidSlice(options: SliceOptions): Promise<UidSlice> {
  const slots = sliceStarts(options);
  const order = [...(options.preferred ?? []).filter((first) => slots.includes(first)), ...slots];
  for (const first of new Set(order)) {
    const held = await lease(first, options.size);
    if (!held) continue;
    // A runner with another slice size may hold uids of this one under another name.
    if (!(await overlapped(first, options.size))) {
      return { base: first, count: options.size, release: () => close(held) };
    }
    await close(held);
  }
  throw new AppError(
    "server.unavailable",
    `Every slice of the child uid range [${options.base}, ${options.base + options.count}) is held by a running runner (${slots.length} of ${options.size} uids; RUNNER_UID_BASE, RUNNER_UID_COUNT, RUNNER_UID_SLICE).`,
  );
}

/** The first uid of every slice of the range. */
export function sliceStarts({ base, count, size }: SliceOptions): number[] {
  const slices = Math.max(1, Math.floor(count / size));
  return Array.from({ length: slices }, (_, i) => base + i * size);
}

/** What a runner's directory name carries of its slice (read back once the runner is dead). */
export function sliceLabel(slice: UidSlice): string {
  return `u${slice.base}-`;
}

/** The first uids of the slices named by these (dead runners') directories. */
export function recordedUidSlices(runnerDirs: string[]): number[] {
  return runnerDirs
    .map((dir) => /-u(\d+)-[^/]*$/.exec(dir)?.[1])
    .filter(Boolean)
    .map(Number);
}

/**
 * Runs `sweep` holding the slice `[first, first + size)` — only when no live runner holds it (or any uid
 * of it) — so a dead runner's slice is swept by a live one without touching a slice just claimed again.
 * Returns whether it swept.
 */
export async function sweepFreeSlice(
  first: number,
  size: number,
  sweep: () => Promise<void>,
): Promise<boolean> {
  const held = await lease(first, size);
  if (!held) return false;
  try {
    if (await overlapped(first, size)) return false;
    await sweep();
    return true;
  } finally {
    await close(held);
  }
}

/** Binds the slice's name; undefined when another process holds it. */
function lease(first: number, size: number): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" ? resolve(undefined) : reject(error),
    );
    server.listen({ path: `\0${LEASE_PREFIX}${first}-${size}` }, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** Whether a live lease of another size shares a uid with `[first, first + size)`. */
async function overlapped(first: number, size: number): Promise<boolean> {
  const table = await readFile("/proc/net/unix", "utf8").catch(() => "");
  // Node pads an abstract name with NULs to the full address length: /proc shows them as "@".
  const pattern = new RegExp(`@${LEASE_PREFIX}(\\d+)-(\\d+)(?=@|$)`, "gm");
  for (const [, otherFirst, otherSize] of table.matchAll(pattern)) {
    const start = Number(otherFirst);
    const length = Number(otherSize);
    if (start === first && length === size) continue; // ours
    if (start < first + size && first < start + length) return true;
  }
  return false;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
