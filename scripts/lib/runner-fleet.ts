/**
 * A local fleet of stdio runners: each its own node process (the parent of its children), started from
 * the runner's container entry with RUNNER_FLEET on, so it registers in the table the way a deployed
 * task does. `RUNNERS=3 npm run dev` and the fleet suites use it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { ROOT } from "./processes";

const ENTRY = resolve(ROOT, "packages/runner/src/main.ts");
const READY = /"msg":"runner listening".*"url":"([^"]+)"(?:.*"runner":"([^"]+)")?/;

/** One runner process of a local fleet. */
export interface FleetProcess {
  /** Its id in the registry (`single` for a runner on its own). */
  id: string;
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGTERM, then waits for it to exit (SIGKILL after `graceMs`, default 30 s: ECS's stop timeout). */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL, at once: a crash (its children die with it through their parent-death signal). */
  kill(): Promise<void>;
}

export interface FleetProcessOptions {
  /**
   * The runner's environment: the AWS endpoint, region, credentials and resource names, and
   * RUNNER_TOKEN. RUNNER_FLEET, HOST and PORT are set here (loopback, a free port).
   */
  env: Record<string, string | undefined>;
  /** Where its log lines go (default: dropped). */
  onLine?: (line: string) => void;
  /** The longest wait for its ready line (default 60 s). */
  timeoutMs?: number;
  /** False: a runner on its own (no RUNNER_FLEET), reached at its URL (default true). */
  fleet?: boolean;
}

/** Starts one runner process of the fleet and waits (bounded) until it listens and has registered. */
export async function startFleetProcess(options: FleetProcessOptions): Promise<FleetProcess> {
  const { RUNNER_FLEET: _fleet, ...env } = options.env;
  const child = spawn(process.execPath, ["--import", "tsx", ENTRY], {
    cwd: ROOT,
    env: {
      ...env,
      ...(options.fleet === false ? {} : { RUNNER_FLEET: "true" }),
      HOST: "127.0.0.1",
      PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const [url, id] = await new Promise<[string, string]>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`runner not ready within ${timeoutMs} ms`)), timeoutMs);
    child.once("exit", (code) => fail(new Error(`runner exited (${code}) before it was ready`)));
    // Its log lines (on stdout or stderr, as its logger writes them) pass on; one says it is ready.
    for (const stream of [child.stdout, child.stderr])
      createInterface({ input: stream! }).on("line", (line) => {
        options.onLine?.(line);
        const found = READY.exec(line);
        if (found) {
          clearTimeout(timer);
          done([found[1] as string, found[2] ?? "single"]);
        }
      });
  });
  const stopped = async (signal: NodeJS.Signals, graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(kill, graceMs);
    await exited;
    clearTimeout(timer);
    process.off("exit", kill);
  };
  return {
    id,
    url,
    pid: child.pid as number,
    child,
    stop: (graceMs = 30_000) => stopped("SIGTERM", graceMs),
    kill: () => stopped("SIGKILL", 0),
  };
}

/** Starts `count` runner processes of one fleet, side by side. */
export function startFleet(count: number, options: FleetProcessOptions): Promise<FleetProcess[]> {
  return Promise.all(Array.from({ length: count }, () => startFleetProcess(options)));
}
