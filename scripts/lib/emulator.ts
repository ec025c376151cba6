/**
 * The local AWS emulator: moto's server in a project-local venv, started on 127.0.0.1 on a free
 * port and stopped with its parent. With AWS_ENDPOINT_URL already set (LocalStack, another moto),
 * nothing is started and that endpoint is used.
 *
 * The emulator this starts serves only requests signed with an access key generated for this start
 * (see moto_server.py): anything else on the host that finds its loopback port — a stdio server's
 * child — can neither read the table nor use the key.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
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
/** How long a moto that keeps a snapshot has to write its last one and exit once told to stop. */
const STOP_WITH_SNAPSHOT_MS = 6_000;

/**
 * Credentials and region for talking to an emulator that takes any (LocalStack, an open moto); never
 * real ones. One this module starts requires its own {@link EmulatorCredentials} instead.
 */
export const EMULATOR_ENV = {
  AWS_REGION: "us-east-1",
  AWS_DEFAULT_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
} as const;

/** The access key an emulator started here requires: every request must be signed with it. */
export interface EmulatorCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** A fresh random access key (an id as AWS shapes them, a 240-bit secret), for one emulator start. */
export function generateEmulatorCredentials(): EmulatorCredentials {
  const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const id = [...randomBytes(16)].map((byte) => BASE32[byte % 32]).join("");
  return { accessKeyId: `AKIA${id}`, secretAccessKey: randomBytes(30).toString("base64url") };
}

export interface Emulator {
  endpoint: string;
  /** The access key it requires, when this process started it so (undefined: adopted or open). */
  credentials?: EmulatorCredentials | undefined;
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

/**
 * Adopts AWS_ENDPOINT_URL (with the region and credentials already in process.env, else
 * {@link EMULATOR_ENV}), or starts moto requiring a fresh access key and puts its endpoint and that key
 * in process.env, where this process's AWS clients read them (and from where it must remove them
 * before it starts anything untrusted: `removeCredentialsFromEnv`). With `dataDir`, the moto it starts
 * keeps its state there across restarts (see {@link startMoto}).
 */
export async function startEmulator(
  log: (line: string) => void = () => {},
  options: { dataDir?: string | undefined } = {},
): Promise<Emulator> {
  for (const [key, value] of Object.entries(EMULATOR_ENV)) process.env[key] ??= value;
  const existing = process.env.AWS_ENDPOINT_URL;
  if (existing) {
    return { endpoint: existing, pid: undefined, owned: false, stop: async () => {} };
  }
  const credentials = generateEmulatorCredentials();
  const emulator = await startMoto({ log, credentials, dataDir: options.dataDir });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: emulator.endpoint,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  });
  delete process.env.AWS_SESSION_TOKEN;
  return emulator;
}

/**
 * Starts a moto server of this process's own on 127.0.0.1:`port` (default 0: a free port), empty,
 * leaving process.env alone — e.g. for a test that stops it and starts an empty one on the same port.
 * With `credentials`, it serves only DynamoDB, SQS and KMS requests signed with them (handed over on
 * its stdin, never argv or env); without, it is moto as published: open to anything that reaches it.
 * With `dataDir`, its DynamoDB, SQS and KMS state is loaded from a snapshot there and kept in it (every
 * few seconds and on stop; see moto_snapshot.py); what it notes of that goes to `log`.
 */
export async function startMoto(
  options: {
    port?: number;
    log?: (line: string) => void;
    credentials?: EmulatorCredentials;
    dataDir?: string | undefined;
  } = {},
): Promise<Emulator & { owned: true; pid: number }> {
  ensureVenv(options.log);
  const { credentials, dataDir } = options;
  const child = spawn(
    VENV_PYTHON,
    [
      SERVER_SCRIPT,
      String(options.port ?? 0),
      ...(credentials ? ["--require-signatures"] : []),
      ...(dataDir ? [`--data-dir=${dataDir}`] : []),
    ],
    { stdio: ["pipe", "pipe", "pipe"], env: motoEnv() },
  );
  if (credentials) child.stdin.write(`${credentials.accessKeyId} ${credentials.secretAccessKey}\n`);
  const endpoint = await waitForReady(child, options.log ?? (() => {}));
  await waitUntilAnswering(endpoint);
  // On this process's exit: one that keeps a snapshot ends on SIGTERM, writing its last one first.
  const onExit = () => child.kill(dataDir ? "SIGTERM" : "SIGKILL");
  process.once("exit", onExit);
  return {
    endpoint,
    credentials,
    pid: child.pid as number,
    owned: true,
    stop: async () => {
      process.off("exit", onExit);
      // Its last snapshot is written before it exits.
      await stopByStdin(child, dataDir ? STOP_WITH_SNAPSHOT_MS : 3_000);
    },
  };
}

/** The few variables moto's process gets: none of this process's tokens or keys. */
function motoEnv(): Record<string, string> {
  const names = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];
  const passed = names.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []));
  // No __pycache__ beside moto_server.py's modules in the source tree.
  return { ...Object.fromEntries(passed), PYTHONDONTWRITEBYTECODE: "1" };
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

/** Resolves to the endpoint on its `ready` line; its `note …` lines go to `log`, then and later. */
function waitForReady(child: ChildProcess, log: (line: string) => void): Promise<string> {
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
      if (line.startsWith("note ")) return log(`emulator: ${line.slice(5)}`);
      const match = /^ready (\S+)$/.exec(line);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolveReady(match[1]);
    });
  });
}

/** Waits until the server answers HTTP at all (one that requires signatures refuses this probe: 403). */
async function waitUntilAnswering(endpoint: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${endpoint}/moto-api/data.json`);
      await response.body?.cancel();
      return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`The AWS emulator at ${endpoint} did not answer within ${START_TIMEOUT_MS / 1000} s`);
}
