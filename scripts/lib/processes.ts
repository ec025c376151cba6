/** Child processes for benchmarks: started with a bounded wait for their ready line, killed on exit. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { createInterface } from "node:readline";

export const ROOT = resolve(import.meta.dirname, "../..");

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** True when nothing listens on 127.0.0.1:`port` right now. */
export function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A port that is free now and below the kernel's ephemeral range, so no `listen(0)` elsewhere can be
 * handed it while a test keeps it closed on purpose (closed-port and restart-on-the-same-port tests).
 */
export async function parkedPort(): Promise<number> {
  let low = 32_768;
  try {
    const [first] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    if (first && Number(first) > 12_000) low = Number(first);
  } catch {
    // not Linux: keep the IANA default
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await isPortFree(port)) return port;
  }
  throw new Error("no free port below the ephemeral range");
}

/** Runs a TypeScript entry with tsx and waits (bounded) for a stdout line matching `ready`. */
export async function startTsProcess(
  entry: string,
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; match: RegExpExecArray; stop(): Promise<void> }> {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(
    process.execPath,
    [...(entry.includes("dev.ts") ? nodeArgs : []), "--import", "tsx", resolve(ROOT, entry), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    },
  );
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  const match = await new Promise<RegExpExecArray>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${entry} not ready within ${timeoutMs} ms`)), timeoutMs);
    child.once("exit", (code) => fail(new Error(`${entry} exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const found = ready.exec(line);
      if (found) {
        clearTimeout(timer);
        done(found);
      }
    });
  });
  return {
    child,
    match,
    async stop() {
      process.off("exit", kill);
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      const timer = setTimeout(kill, 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The p-th percentile (0–100) of samples. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system, in ms) a process has used so far, all its threads together: utime + stime
 * of /proc/<pid>/stat, in clock ticks (10 ms each, usually). NaN where there is no /proc.
 */
export function cpuTimeMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return Number.NaN;
  }
  // The command name (field 2) is in parentheses and may hold spaces; fields 14 and 15 follow it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}
