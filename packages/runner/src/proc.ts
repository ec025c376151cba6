/** The runner's view of processes, from /proc (Linux): who belongs to a child, and what it uses. */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times on every architecture it runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** One process as /proc/<pid>/stat shows it (the fields the runner needs). */
export interface ProcStat {
  pid: number;
  state: string;
  pgrp: number;
  session: number;
  /** utime + stime + cutime + cstime: its own CPU time and that of the children it reaped. */
  ticks: number;
  threads: number;
  rssPages: number;
  /** When it started, in clock ticks since boot (field 22: with the pid, names one process for good). */
  startTicks: number;
  /** When it started, in seconds since boot. */
  startedAt: number;
}

/** Parses a /proc/<pid>/stat line (the command name may hold spaces and parentheses). */
export function parseProcStat(text: string): ProcStat | undefined {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state) of proc(5): field n is fields[n - 3].
  const at = (n: number) => Number(fields[n - 3]);
  if (fields.length < 22 || Number.isNaN(at(24))) return undefined;
  return {
    pid: Number.parseInt(text, 10),
    state: fields[0] ?? "",
    pgrp: at(5),
    session: at(6),
    ticks: at(14) + at(15) + at(16) + at(17),
    threads: at(20),
    rssPages: at(24),
    startTicks: at(22),
    startedAt: at(22) / CLOCK_TICKS_PER_SECOND,
  };
}

/**
 * Every live process (zombies left out), from /proc; none where there is no /proc. Read synchronously:
 * a pass over ~150 processes costs ~3.5 ms of CPU this way, ~16 ms through the thread pool.
 */
export function processes(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const stats: ProcStat[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: ProcStat | undefined;
    try {
      stat = parseProcStat(readFileSync(`/proc/${name}/stat`, "utf8"));
    } catch {
      continue; // gone meanwhile
    }
    if (stat && stat.state !== "Z" && stat.state !== "X") stats.push(stat);
  }
  return stats;
}

/**
 * How long ago (in seconds) the child `pid` started its first process of its own — for a package
 * runner, the server it fetched — or undefined while it has none.
 */
export async function launchedAgo(pid: number): Promise<number | undefined> {
  const uptime = Number((await readFile("/proc/uptime", "utf8").catch(() => "")).split(" ")[0]);
  const launched = processes().filter((stat) => stat.session === pid && stat.pid !== pid);
  if (launched.length === 0 || Number.isNaN(uptime)) return undefined;
  return uptime - Math.min(...launched.map((stat) => stat.startedAt));
}
