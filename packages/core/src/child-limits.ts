/**
 * What one stdio child may use: CPU time, memory and processes. A server may set its own (`limits`);
 * the runner's defaults (CHILD_CPU_SECONDS, CHILD_MEMORY_MIB, CHILD_MAX_PROCESSES) fill the rest; 0 is
 * no limit. A child that passes one is killed (its process group), and its server's `lastError` says which.
 */
import { z } from "zod";
import { assertNever } from "./exhaustive";

const limit = (max: number, description: string) =>
  z.number().int().min(0).max(max).optional().meta({ description });

/** A stdio server's own limits; a field left out takes the runner's default, 0 means none. */
export const ChildLimits = z
  .strictObject({
    cpuSeconds: limit(
      30 * 24 * 3600,
      "CPU time (user + system, all its processes together) the child may use over its life, in seconds; past it the child is killed (0: none)",
    ),
    memoryMiB: limit(
      1024 * 1024,
      "resident memory of all its processes together, in MiB; past it the child is killed (each process's data segment is also capped by the kernel at twice this) (0: none)",
    ),
    processes: limit(
      65_536,
      "how many processes and threads it may have together (the kernel counts threads too: Node itself runs ~11); one more and the child is killed (0: none)",
    ),
  })
  .meta({ id: "ChildLimits" });
export type ChildLimits = z.infer<typeof ChildLimits>;

/** Every limit decided: a number, 0 for none. */
export type ResolvedLimits = Required<ChildLimits>;

/** The defaults of CHILD_CPU_SECONDS, CHILD_MEMORY_MIB and CHILD_MAX_PROCESSES. */
export const DEFAULT_CHILD_LIMITS: ResolvedLimits = { cpuSeconds: 3_600, memoryMiB: 2_048, processes: 512 };

/** The server's own limits over the runner's defaults, field by field. */
export function resolveLimits(own: ChildLimits | undefined, defaults: ResolvedLimits): ResolvedLimits {
  return {
    cpuSeconds: own?.cpuSeconds ?? defaults.cpuSeconds,
    memoryMiB: own?.memoryMiB ?? defaults.memoryMiB,
    processes: own?.processes ?? defaults.processes,
  };
}

/** Which limit a child passed. */
export type LimitKind = "cpu" | "memory" | "processes";

/** What a child's processes use together at one moment. */
export interface ChildUsage {
  cpuSeconds: number;
  memoryBytes: number;
  /** Processes and threads. */
  tasks: number;
}

/** The first limit `usage` passes, if any. */
export function passedLimit(usage: ChildUsage, limits: ResolvedLimits): LimitKind | undefined {
  if (limits.memoryMiB > 0 && usage.memoryBytes > limits.memoryMiB * 1024 * 1024) return "memory";
  if (limits.cpuSeconds > 0 && usage.cpuSeconds > limits.cpuSeconds) return "cpu";
  if (limits.processes > 0 && usage.tasks > limits.processes) return "processes";
  return undefined;
}

/** The server's `lastError` when its child was killed for passing a limit. */
export function limitMessage(kind: LimitKind, limits: ResolvedLimits): string {
  switch (kind) {
    case "cpu":
      return `the server passed its CPU time limit (${limits.cpuSeconds} s) and was stopped`;
    case "memory":
      return `the server passed its memory limit (${limits.memoryMiB} MiB) and was stopped`;
    case "processes":
      return `the server passed its process limit (${limits.processes} processes and threads) and was stopped`;
    default:
      return assertNever(kind);
  }
}

/**
 * The kernel's own caps, as util-linux `prlimit` options (each process; the runner watches the
 * group's sum): CPU time (SIGXCPU at the limit, SIGKILL a second later), the data segment at twice the
 * memory limit (a burst between two samples cannot run away; RLIMIT_AS would break V8, which reserves
 * large address ranges), and — only when the child has a uid of its own, since the kernel counts per
 * uid — one task more than the process limit (so the runner sees the child pass it).
 */
export function rlimitOptions(limits: ResolvedLimits, ownUid: boolean): string[] {
  const options: string[] = [];
  if (limits.cpuSeconds > 0) options.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`);
  if (limits.memoryMiB > 0) options.push(`--data=${limits.memoryMiB * 2 * 1024 * 1024}`);
  if (limits.processes > 0 && ownUid) options.push(`--nproc=${limits.processes + 1}`);
  return options;
}
