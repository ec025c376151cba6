/**
 * Children's limits, enforced twice: by the kernel on each process (rlimits set through util-linux
 * `prlimit` at exec, see {@link rlimitOptions}) and by the runner on each child as a whole — it reads
 * /proc every `sampleMs`, sums the CPU time, resident memory and tasks of every process of the child's
 * session (the child leads its own), and kills a child past a limit. cgroups would do the second part
 * in the kernel, but a container's cgroupfs is usually read-only (Fargate) or, on a cgroup v1 host,
 * has no v2 controllers, while rlimits and /proc need no privilege at all and work everywhere.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type ChildUsage, type LimitKind, passedLimit, type ResolvedLimits } from "@mcpgw/core";
import { CLOCK_TICKS_PER_SECOND, processes } from "./proc";

/** How often the runner sums its children's use by default. */
export const DEFAULT_LIMIT_SAMPLE_MS = 500;

interface Watched {
  limits: ResolvedLimits;
  onPassed: (kind: LimitKind, usage: ChildUsage) => void;
}

/** Sums each watched child's use every `sampleMs` and calls its `onPassed` (once) past a limit. */
export class LimitWatch {
  /** By the child's pid, which is its session and process group id. */
  private readonly watched = new Map<number, Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly sampleMs = DEFAULT_LIMIT_SAMPLE_MS) {}

  /** Watches the child `pid` (a session leader); returns how to stop watching it. */
  watch(pid: number, limits: ResolvedLimits, onPassed: Watched["onPassed"]): () => void {
    if (!hasProc() || (limits.cpuSeconds === 0 && limits.memoryMiB === 0 && limits.processes === 0))
      return () => {};
    const entry = { limits, onPassed };
    this.watched.set(pid, entry);
    this.timer ??= setInterval(() => this.sample(), this.sampleMs).unref();
    return () => {
      if (this.watched.get(pid) === entry) this.watched.delete(pid);
      if (this.watched.size === 0) this.close();
    };
  }

  /** Stops sampling (runner shutdown). */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private sample(): void {
    if (this.watched.size === 0) return;
    const usage = usageBySession(new Set(this.watched.keys()));
    for (const [pid, entry] of this.watched) {
      const used = usage.get(pid);
      const kind = used && passedLimit(used, entry.limits);
      if (!used || !kind) continue;
      this.watched.delete(pid);
      entry.onPassed(kind, used);
    }
  }
}

/** The summed use of the processes of each of these sessions (or process groups). */
function usageBySession(sessions: Set<number>): Map<number, ChildUsage> {
  const usage = new Map<number, ChildUsage>();
  for (const stat of processes()) {
    const owner = sessions.has(stat.session) ? stat.session : sessions.has(stat.pgrp) ? stat.pgrp : undefined;
    if (owner === undefined) continue;
    const sum = usage.get(owner) ?? { cpuSeconds: 0, memoryBytes: 0, tasks: 0 };
    sum.cpuSeconds += stat.ticks / CLOCK_TICKS_PER_SECOND;
    sum.memoryBytes += stat.rssPages * pageSize();
    sum.tasks += stat.threads;
    usage.set(owner, sum);
  }
  return usage;
}

let pageBytes: number | undefined;

function pageSize(): number {
  if (pageBytes === undefined) {
    const answer = spawnSync("getconf", ["PAGESIZE"], { encoding: "utf8", timeout: 5_000 });
    const value = Number(answer.stdout?.trim());
    pageBytes = Number.isInteger(value) && value > 0 ? value : 4_096;
  }
  return pageBytes;
}

function hasProc(): boolean {
  return existsSync("/proc/self/stat");
}

/**
 * What of the limits this runner cannot enforce, in sentences to log once at its start: nothing on
 * Linux as root with util-linux.
 */
export function limitGaps(isolated: boolean, prlimit: string | undefined): string[] {
  if (!hasProc())
    return ["children's CPU, memory and process limits are not enforced: there is no /proc (not Linux)"];
  const gaps: string[] = [];
  if (!prlimit)
    gaps.push(
      "children's limits are watched by the runner only, not capped by the kernel: util-linux prlimit is not available, so a child may overshoot a limit between two samples",
    );
  else if (!isolated)
    gaps.push(
      "children's process limit is watched by the runner only, not capped by the kernel: children share the runner's uid, and the kernel counts processes per uid",
    );
  return gaps;
}
