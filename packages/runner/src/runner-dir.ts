/**
 * The runner's own temp directory: made fresh at every start (never a fixed path another process may
 * already own), traversable but not listable by children (0711), named after its owner so a later
 * start can recognise — and wipe — the directory of a runner that died without cleaning up.
 */
import { readFileSync } from "node:fs";
import { chmod, lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { parseProcStat } from "./proc";
import { recordedUidSlices } from "./uid-slice";

const PREFIX = "mcpgw-runner-";

/**
 * Wipes what dead runners left under `base` (their instance dirs and secret files: `dead`, when the
 * caller already listed them), then makes this runner's directory there, its name carrying `label`
 * (e.g. its uid slice). Returns its path.
 */
export async function createRunnerDir(base: string, label = "", dead?: string[]): Promise<string> {
  await wipeDeadRunnerDirs(base, dead);
  const dir = await mkdtemp(join(base, `${PREFIX}${process.pid}-${startTicks(process.pid) ?? 0}-${label}`));
  await chmod(dir, 0o711);
  return dir;
}

/**
 * Removes `mcpgw-runner-<pid>-<start>-…` dirs under `base` whose process is gone (or is another one):
 * `listed` when given (see {@link deadRunnerDirs}), else found now.
 */
export async function wipeDeadRunnerDirs(base: string, listed?: string[]): Promise<string[]> {
  const dead = listed ?? (await deadRunnerDirs(base));
  for (const path of dead) await rm(path, { recursive: true, force: true });
  return dead;
}

/**
 * What dead runners on this host left, swept by a live one (each runner of a fleet, every lease period):
 * each dead runner's directory, once `sweepSlice` swept the uid slice its name records (its children,
 * their temp files; false: a live runner holds that slice now, and swept it when it claimed it — the
 * directory too). Returns the directories removed.
 */
export async function sweepDeadRunnerDirs(
  base: string,
  sweepSlice: (first: number) => Promise<boolean>,
): Promise<string[]> {
  const removed: string[] = [];
  for (const path of await deadRunnerDirs(base)) {
    const [first] = recordedUidSlices([path]);
    if (first !== undefined && !(await sweepSlice(first))) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

/** The `mcpgw-runner-<pid>-<start>-…` dirs under `base`, ours, whose process is gone (or is another one). */
export async function deadRunnerDirs(base: string): Promise<string[]> {
  // Without /proc, whether a runner is alive cannot be told: none is dead.
  if (startTicks(process.pid) === undefined) return [];
  const entries = await readdir(base).catch(() => [] as string[]);
  const dead: string[] = [];
  const me = process.getuid?.();
  for (const name of entries) {
    const owner = /^mcpgw-runner-(\d+)-(\d+)-/.exec(name);
    if (!owner) continue;
    const path = join(base, name);
    const stat = await lstat(path).catch(() => undefined);
    if (!stat?.isDirectory() || (me !== undefined && stat.uid !== me)) continue;
    if (startTicks(Number(owner[1])) === Number(owner[2])) continue; // its runner is alive
    dead.push(path);
  }
  return dead;
}

/** When a process started (clock ticks since boot, /proc/<pid>/stat field 22); undefined if it is gone. */
function startTicks(pid: number): number | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"))?.startTicks;
  } catch {
    return undefined;
  }
}
