/**
 * The local AWS emulator: moto's server in a project-local venv, started on 127.0.0.1 on a free
 * port and stopped with its parent. With AWS_ENDPOINT_URL already set (LocalStack, another moto),
 * nothing is started and that endpoint is used.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ensureVenv as ensurePinnedVenv, type VenvSpec, venvPath } from "./venv";

export const MOTO_REQUIREMENT = "moto[server]==5.2.5";
const MOTO: VenvSpec = {
  dir: ".venv-moto",
  requirement: MOTO_REQUIREMENT,
  probe: "import moto.server, flask",
  purpose: "The AWS emulator",
};
export const VENV_DIR = venvPath(MOTO);
const VENV_PYTHON = venvPath(MOTO, "bin", "python");
const START_TIMEOUT_MS = 30_000;

/** Credentials and region for talking to an emulator; never real ones. */
export const EMULATOR_ENV = {
  AWS_REGION: "us-east-1",
  AWS_DEFAULT_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
} as const;

export interface Emulator {
  endpoint: string;
  /** The emulator process id, when this process started it. */
  pid: number | undefined;
  /** True when this process started the emulator (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
}

/** Creates the venv with the pinned moto when it is missing. Throws a clear error without Python/pip. */
export function ensureVenv(log: (line: string) => void = () => {}): void {
  ensurePinnedVenv(MOTO, log);
}

/**
 * moto's threaded server with DynamoDB made serializable (see moto_server.py), in a Python process that
 * exits as soon as its stdin closes — so it dies with its parent however the parent ends (no orphans,
 * even on SIGKILL).
 */
const SERVER_SCRIPT = join(import.meta.dirname, "moto_server.py");

/** Starts moto (or adopts AWS_ENDPOINT_URL) and sets AWS_ENDPOINT_URL and dummy credentials in process.env. */
export async function startEmulator(log: (line: string) => void = () => {}): Promise<Emulator> {
  for (const [key, value] of Object.entries(EMULATOR_ENV)) process.env[key] ??= value;
  const existing = process.env.AWS_ENDPOINT_URL;
  if (existing) return { endpoint: existing, pid: undefined, owned: false, stop: async () => {} };
  const emulator = await startMoto({ log });
  process.env.AWS_ENDPOINT_URL = emulator.endpoint;
  return emulator;
}

/**
 * Starts a moto server of this process's own on 127.0.0.1:`port` (default 0: a free port), empty,
 * leaving process.env alone — e.g. for a test that stops it and starts an empty one on the same port.
 */
export async function startMoto(
  options: { port?: number; log?: (line: string) => void } = {},
): Promise<Emulator & { owned: true; pid: number }> {
  ensureVenv(options.log);
  const child = spawn(VENV_PYTHON, [SERVER_SCRIPT, String(options.port ?? 0)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const endpoint = await waitForReady(child);
  await waitUntilAnswering(endpoint);
  const onExit = () => child.kill("SIGKILL");
  process.once("exit", onExit);
  return {
    endpoint,
    pid: child.pid as number,
    owned: true,
    stop: async () => {
      process.off("exit", onExit);
      await stopByStdin(child, 3_000);
    },
  };
}

/** Ends a server that exits when its stdin closes: closes it, then SIGKILL if it lives `graceMs` on. */
export async function stopByStdin(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

function waitForReady(child: ChildProcess): Promise<string> {
  return new Promise((resolveReady, reject) => {
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000);
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`The AWS emulator did not start within ${START_TIMEOUT_MS / 1000} s: ${stderr}`));
    }, START_TIMEOUT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`The AWS emulator exited (code ${code}) before it was ready: ${stderr}`));
    });
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const match = /^ready (\S+)$/.exec(line);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolveReady(match[1]);
    });
  });
}

async function waitUntilAnswering(endpoint: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${endpoint}/moto-api/data.json`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`The AWS emulator at ${endpoint} did not answer within ${START_TIMEOUT_MS / 1000} s`);
}
