/** Shared helpers of the stdio-runner suites: fixtures as commands, the runner's own routes, and /proc. */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { startStack, waitFor } from "../support/stack";

export { everythingEntry } from "../fixtures/everything";
export { createServer, reaches, statusReader, uniqueName } from "../lifecycle/helpers";
export { waitFor };

const here = dirname(fileURLToPath(import.meta.url));

/** The plain-JS stdio server that starts in tens of milliseconds (`--grandchild <s>` adds a `sleep`). */
export const TINY_STDIO = join(here, "fixtures", "tiny-stdio.mjs");

/** The hostile stdio server: tries to read, write and flood what a malicious package would. */
export const HOSTILE_STDIO = join(here, "fixtures", "hostile-stdio.mjs");

/** The installed `@modelcontextprotocol/server-filesystem` entry point. */
export function filesystemEntry(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("@modelcontextprotocol/server-filesystem/package.json");
  return join(dirname(manifest), "dist", "index.js");
}

const bundled = new Map<string, { dir: string; file: string }>();

/**
 * `tests/fixtures/stdio-upstream.ts` bundled into one self-contained ESM file (SDK and zod inside),
 * so it runs as `node <file>` from any cwd — the runner starts children in their temp HOME — and
 * starts in ~0.1 s instead of tsx's ~1 s. Call `removeBundle()` in afterAll.
 */
export function stdioUpstream(): Promise<string> {
  return bundleFixture("stdio-upstream");
}

/** `tests/fixtures/tenant-upstream.ts` (state kept in its process, sampling), bundled as {@link stdioUpstream}. */
export function tenantUpstream(): Promise<string> {
  return bundleFixture("tenant-upstream");
}

/** `tests/fixtures/trace-upstream.ts` (run it with `--stdio`), bundled as {@link stdioUpstream}. */
export function traceUpstream(): Promise<string> {
  return bundleFixture("trace-upstream");
}

async function bundleFixture(name: string): Promise<string> {
  const done = bundled.get(name);
  if (done) return done.file;
  const dir = mkdtempSync(join(tmpdir(), "mcpgw-fixture-"));
  chmodSync(dir, 0o755); // children run under their own uids: they must be able to read it
  const file = join(dir, `${name}.mjs`);
  await build({
    entryPoints: [join(here, "..", "fixtures", `${name}.ts`)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: file,
    logLevel: "warning",
  });
  bundled.set(name, { dir, file });
  return file;
}

export function removeBundle(): void {
  for (const { dir } of bundled.values()) rmSync(dir, { recursive: true, force: true });
  bundled.clear();
}

/**
 * A stack with the runner, which makes its own directory (`tempRoot`: the children's HOMEs and secret
 * files) inside a fresh base directory (`tempBase`, removed by `cleanup`), and runs children under a uid
 * pool of its own (when root), so parallel suites never share uids.
 */
export async function startRunnerStack(
  runner: Record<string, unknown> = {},
  stack: Record<string, unknown> = {},
) {
  const tempBase = mkdtempSync(join(tmpdir(), "mcpgw-runner-test-"));
  chmodSync(tempBase, 0o711); // children traverse it to reach their HOME
  const started = await startStack({
    ...stack,
    runner: { tempBase, uidBase: testUidBase(), uidCount: 200, ...runner },
  });
  const tempRoot = started.runner?.dir ?? tempBase;
  return {
    ...started,
    tempBase,
    tempRoot,
    /** A fresh worktree directory `name` under the stack's WORKTREE_BASE (its threads' children may enter it). */
    worktree(name: string): string {
      const dir = join(started.worktreeBase, name);
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      return dir;
    },
    /** A request to the runner itself with its token (or the given headers). */
    async runnerCall(method: string, path: string, headers?: Record<string, string>) {
      const runner = started.runner;
      if (!runner) throw new Error("no runner");
      const response = await fetch(`${runner.url}${path}`, {
        method,
        headers: headers ?? { authorization: `Bearer ${runner.token}` },
      });
      const text = await response.text();
      // biome-ignore lint/suspicious/noExplicitAny: responses are read loosely in tests
      let body: any;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      return { status: response.status, body };
    },
    /** Live instances as `GET /servers` reports them. */
    async instances(): Promise<RunnerInstance[]> {
      const runner = started.runner;
      if (!runner) throw new Error("no runner");
      const response = await fetch(`${runner.url}/servers`, {
        headers: { authorization: `Bearer ${runner.token}` },
      });
      if (response.status !== 200) throw new Error(`GET /servers → ${response.status}`);
      return ((await response.json()) as { instances: RunnerInstance[] }).instances;
    },
    /** A tool call through the gateway: `POST /v1/tools/{name}/call`. */
    callTool(name: string, args: Record<string, unknown> = {}, thread?: string) {
      return started.call("POST", `/v1/tools/${encodeURIComponent(name)}/call`, {
        arguments: args,
        ...(thread ? { thread } : {}),
      });
    },
    async cleanup() {
      await started.stop();
      rmSync(tempBase, { recursive: true, force: true });
    },
  };
}

export type RunnerStack = Awaited<ReturnType<typeof startRunnerStack>>;

/** A uid range of its own for each test runner: [base, base + 200), somewhere in 200,000–2,200,000. */
export function testUidBase(): number {
  return 200_000 + Math.floor(Math.random() * 10_000) * 200;
}

export interface RunnerInstance {
  serverId: string;
  threadId: string | null;
  caller: string | null;
  pid: number | null;
  uptimeMs: number;
  restarts: number;
  /** Requests the instance is serving now. */
  inFlight: number;
}

/** The pid of the live instance of (server, thread), waiting until there is one. */
export async function pidOf(stack: RunnerStack, serverId: string, threadId: string | null = null) {
  const list = await waitFor(
    () => stack.instances(),
    (instances) => instances.some((i) => i.serverId === serverId && i.threadId === threadId && i.pid),
    { timeoutMs: 20_000 },
  );
  return list.find((i) => i.serverId === serverId && i.threadId === threadId)?.pid as number;
}

// ---- /proc ----

/** state, ppid and pgrp of a process, or undefined when there is none. */
export function procStat(pid: number): { state: string; ppid: number; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid, pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: state ?? "", ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** Running (not gone, not a zombie waiting to be reaped). */
export function isAlive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

export function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
}

export function environ(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean)) {
    const eq = entry.indexOf("=");
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** The resident set of a process in KiB (VmRSS). */
export function rssKiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

function allPids(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Live processes whose parent chain leads to `root` (zombies excluded). */
export function descendants(root = process.pid): number[] {
  const parent = new Map<number, number>();
  for (const pid of allPids()) {
    const stat = procStat(pid);
    if (stat && stat.state !== "Z" && stat.state !== "X") parent.set(pid, stat.ppid);
  }
  return [...parent.keys()].filter((pid) => {
    for (let up = parent.get(pid), hops = 0; up !== undefined && hops < 64; up = parent.get(up), hops++)
      if (up === root) return true;
    return false;
  });
}

/** Live processes in any of these process groups (orphans reparented to init included). */
export function inGroups(pgids: Iterable<number>): number[] {
  const wanted = new Set(pgids);
  return allPids().filter((pid) => {
    const stat = procStat(pid);
    return stat !== undefined && stat.state !== "Z" && wanted.has(stat.pgrp);
  });
}

/** Live processes whose command line contains `marker`. */
export function withMarker(marker: string): number[] {
  return allPids().filter((pid) => {
    try {
      return isAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
}

/**
 * TCP connections established to `port` on this machine, counted on the listener's side (source port
 * = `port`): by `ss` (netlink, filtered in the kernel, and not blocking this process while it runs),
 * else from /proc/net/tcp{,6} (slow on a busy machine: tens of ms per read).
 */
export async function connectionsTo(port: number): Promise<number> {
  const listed = await new Promise<string | undefined>((resolve) => {
    execFile("ss", ["-Htn", "state", "established", `( sport = :${port} )`], (error, stdout) =>
      resolve(error ? undefined : stdout),
    );
  });
  if (listed !== undefined) return listed.split("\n").filter((line) => line.trim()).length;
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  let count = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await readFile(table, "utf8").catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === "01" && local?.endsWith(`:${hex}`)) count++;
    }
  }
  return count;
}

/** The text of a gateway tool-call response body. */
export function textOf(body: { content?: Array<{ type: string; text?: string }> }): string {
  return (body.content ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
}

/** The runners' own directories under `tempBase` (beside them may lie the default worktree base). */
export function runnerDirs(tempBase: string): string[] {
  return readdirSync(tempBase).filter((name) => name.startsWith("mcpgw-runner-"));
}
