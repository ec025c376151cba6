/**
 * `npm run dev` as its own process (API, worker, sweep and stdio runner in one), on the run's emulator
 * with resources of its own: for what only another process can show — its memory, surviving a child's
 * fault with the same pid, or a hard kill and restart.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "../../scripts/lib/processes";
import { createTestConfig } from "./aws";

const ROOT = resolve(import.meta.dirname, "../..");

export interface DevProcess {
  url: string;
  pid: number;
  adminToken: string;
  /** Everything it wrote to stderr (its JSON log lines) so far. */
  logs(): string;
  /** An admin API request with a JSON body. */
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Peak and current resident set (KiB), from /proc/<pid>/status. */
  memory(): { peakKiB: number; rssKiB: number };
  /** True while the process runs. */
  alive(): boolean;
  /** SIGKILL (a hard stop: nothing is cleaned up). */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s; resolves to how it exited. */
  stop(): Promise<ExitStatus>;
}

/** How the process ended: its exit code, or the signal that ended it. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Starts `scripts/dev.ts` with `env` on top of its own fresh table, queues and port; resolves once it
 * prints its ready line. Pass the same `env` (and `config` of a previous start) to restart "the same" stack.
 * `args` follow `scripts/dev.ts`: `--ephemeral` unless given, so an emulator a test's stack starts for
 * itself keeps nothing (pass `[]` and DEV_DATA_DIR in `env` to keep its data there).
 */
export async function startDevProcess(
  env: Record<string, string> = {},
  previous?: { config: Awaited<ReturnType<typeof createTestConfig>> },
  timeoutMs = 60_000,
  args: string[] = ["--ephemeral"],
): Promise<DevProcess & { config: Awaited<ReturnType<typeof createTestConfig>> }> {
  const config = previous?.config ?? (await createTestConfig());
  const { adminToken, env: own } = await devEnv(config);
  const child = spawnDev(args, { ...own, ...env });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<ExitStatus>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`dev stack not ready in ${timeoutMs} ms:\n${stderr}`)),
      timeoutMs,
    );
    child.once("exit", (code) => fail(new Error(`dev stack exited (${code}):\n${stderr}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const ready = /MCP Gateway ready at (\S+)/.exec(line);
      if (ready?.[1]) {
        clearTimeout(timer);
        done(ready[1]);
      }
    });
  });
  const pid = child.pid as number;
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    config,
    url,
    pid,
    adminToken,
    logs: () => stderr,
    async call(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminToken}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed };
    },
    memory() {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
      return { peakKiB: field("VmHWM"), rssKiB: field("VmRSS") };
    },
    alive,
    async kill() {
      process.off("exit", killOnExit);
      if (alive()) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      process.off("exit", killOnExit);
      if (!alive()) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const status = await exited;
      clearTimeout(timer);
      return status;
    },
  };
}

/** A dev stack's environment on `config`'s table, queues and key, with a free port and a fresh admin token. */
export async function devEnv(config: Awaited<ReturnType<typeof createTestConfig>>) {
  const adminToken = `dev-admin-${randomUUID()}`;
  const env: Record<string, string> = {
    AWS_ENDPOINT_URL: config.endpoint ?? "",
    TABLE_NAME: config.tableName,
    QUEUE_NAME: config.queueName,
    DEAD_LETTER_QUEUE_NAME: config.deadLetterQueueName,
    KMS_KEY_ALIAS: config.keyAlias,
    PORT: String(await freePort()),
    ADMIN_TOKEN: adminToken,
  };
  return { adminToken, env };
}

/** `scripts/dev.ts` with `args`, this process's environment and `env` on top (LOG_LEVEL info unless given). */
function spawnDev(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", resolve(ROOT, "scripts/dev.ts"), ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * `npm run dev -- args…` exactly as a newcomer types it (npm, scripts/node22.mjs, tsx, scripts/dev.ts),
 * with npm's own banner silenced, in a process group of its own: signal the group as a terminal does,
 * or SIGKILL it whole.
 */
export function spawnNpmDev(args: string[], env: Record<string, string>): ChildProcess {
  return spawn("npm", ["run", "--silent", "dev", "--", ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
}

/** `npm run dev` started by {@link startNpmDev}: its URL once ready, what it wrote to stderr, its exit. */
export interface NpmDev {
  dev: ChildProcess;
  url: string;
  /** stderr so far (the `[dev]` lines). */
  output(): string;
  exited: Promise<ExitStatus>;
  /** Ctrl-C (SIGINT to its process group): how it exited, or `hung` if it did not within `timeoutMs`. */
  interrupt(timeoutMs: number): Promise<ExitStatus | "hung">;
}

/** {@link spawnNpmDev}, then waits (at most `timeoutMs`) for its `MCP Gateway ready at <url>` line. */
export async function startNpmDev(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<NpmDev> {
  const dev = spawnNpmDev(args, env);
  const exited = new Promise<ExitStatus>((done) =>
    dev.once("exit", (code, signal) => done({ code, signal })),
  );
  let output = "";
  dev.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  try {
    const url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`not ready in ${timeoutMs / 1000} s:\n${output}`)),
        timeoutMs,
      );
      createInterface({ input: dev.stdout! }).on("line", (line) => {
        const ready = /MCP Gateway ready at (\S+)/.exec(line);
        if (ready?.[1]) {
          clearTimeout(timer);
          done(ready[1]);
        }
      });
    });
    const interrupt = (ms: number) => {
      signalGroup(dev, "SIGINT");
      return Promise.race([exited, new Promise<"hung">((done) => setTimeout(() => done("hung"), ms))]);
    };
    return { dev, url, output: () => output, exited, interrupt };
  } catch (error) {
    signalGroup(dev, "SIGKILL");
    throw error;
  }
}

/** Sends `signal` to `child`'s whole process group (it was spawned detached); gone already is fine. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    // the group has exited
  }
}

/** How a dev process that was to stop by itself ended: its exit, everything it wrote, how long it ran. */
export interface DevExit extends ExitStatus {
  /** stdout and stderr, interleaved as they came. */
  output: string;
  elapsedMs: number;
  /** True when it was still running at the deadline (and was SIGKILLed then). */
  timedOut: boolean;
}

/**
 * Runs `npm run dev` with `env` (over this process's) until it exits by itself — a start that must
 * fail — SIGKILLing its whole process group at `timeoutMs`. `args` as for {@link startDevProcess}.
 */
export async function runDevUntilExit(
  env: Record<string, string>,
  { timeoutMs = 30_000, args = ["--ephemeral"] }: { timeoutMs?: number; args?: string[] } = {},
): Promise<DevExit> {
  const started = performance.now();
  const child = spawnNpmDev(args, env);
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString("utf8");
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  let timedOut = false;
  const kill = () => signalGroup(child, "SIGKILL");
  process.once("exit", kill);
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, timeoutMs);
  const { code, signal } = await new Promise<ExitStatus>((done) =>
    child.once("close", (code, signal) => done({ code, signal })),
  );
  clearTimeout(timer);
  process.off("exit", kill);
  return { code, signal, output, elapsedMs: performance.now() - started, timedOut };
}
