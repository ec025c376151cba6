/**
 * Project-local Python venvs for pinned PyPI tools (`.venv-<name>`, gitignored), created on first use.
 * Race-safe: test files and parallel runs may ask for the same venv at once; one creates it under a
 * lock directory while the others wait, then everyone checks it works.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
/** A lock older than this was left by a crashed creator (pip installs take a minute or two at most). */
const STALE_LOCK_MS = 10 * 60_000;
const LOCK_WAIT_MS = 15 * 60_000;

/** A pinned tool's venv: where it lives, what pip installs, and how to tell it works. */
export interface VenvSpec {
  /** Directory name under the project root, `.venv-<name>`. */
  dir: string;
  /** The pip requirement, pinned (`moto[server]==5.2.5`). */
  requirement: string;
  /** Bounds on dependencies the tool's own metadata leaves open where newer releases break it (`cbor2<6`). */
  pins?: string[];
  /** Python code that exits 0 once the tool is usable (`import moto.server`). */
  probe: string;
  /** What needs it, for the error when Python is missing ("The AWS emulator"). */
  purpose: string;
}

/** The absolute path of a file inside a venv (`bin/python`, `bin/st`). */
export function venvPath(spec: Pick<VenvSpec, "dir">, ...parts: string[]): string {
  return join(ROOT, spec.dir, ...parts);
}

/** Creates the venv with the pinned requirement when it is missing or broken. Throws a clear error without Python/pip. */
export function ensureVenv(spec: VenvSpec, log: (line: string) => void = () => {}): void {
  if (usable(spec)) return;
  withLock(`${venvPath(spec)}.lock`, () => {
    if (usable(spec)) return; // another process made it while we waited
    const python = ["python3", "python"].find((bin) => spawnSync(bin, ["--version"]).status === 0);
    if (!python) {
      throw new Error(`${spec.purpose} needs Python 3 (python3) with venv and pip; none was found on PATH.`);
    }
    const dir = venvPath(spec);
    log(`creating ${dir} with ${spec.requirement} (first run only)`);
    rmSync(dir, { recursive: true, force: true }); // a half-made one from a crashed run
    run(python, ["-m", "venv", dir], `create ${dir} (is python3-venv installed?)`);
    run(
      venvPath(spec, "bin", "python"),
      [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        spec.requirement,
        ...(spec.pins ?? []),
      ],
      `pip install ${[spec.requirement, ...(spec.pins ?? [])].join(" ")}`,
    );
  });
}

function usable(spec: VenvSpec): boolean {
  const python = venvPath(spec, "bin", "python");
  return existsSync(python) && spawnSync(python, ["-c", spec.probe], { stdio: "ignore" }).status === 0;
}

function run(bin: string, args: string[], what: string): void {
  const result = spawnSync(bin, args, { stdio: ["ignore", "inherit", "pipe"], encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`Could not ${what}: ${(result.stderr || result.error?.message || "").trim()}`);
  }
}

/** Runs `fn` holding `lock` (a directory: `mkdir` is atomic), waiting for another holder first. */
export function withLock(lock: string, fn: () => void): void {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() - lockedAt(lock) > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`Timed out waiting for ${lock}`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** When the lock was taken (now, when it is already gone). */
function lockedAt(lock: string): number {
  try {
    return statSync(lock).mtimeMs;
  } catch {
    return Date.now();
  }
}
