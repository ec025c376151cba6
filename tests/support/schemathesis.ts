/**
 * Schemathesis (PyPI, pinned) in `.venv-schemathesis`, created on first use: runs `st` against a
 * live OpenAPI document with this suite's settings and hooks (tests/api/schemathesis/).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureVenv, type VenvSpec, venvPath } from "../../scripts/lib/venv";

export const SCHEMATHESIS_REQUIREMENT = "schemathesis==4.32.5";
const SCHEMATHESIS: VenvSpec = {
  dir: ".venv-schemathesis",
  requirement: SCHEMATHESIS_REQUIREMENT,
  probe: "import schemathesis.cli",
  purpose: "The API contract fuzz test",
};
const SETTINGS = join(import.meta.dirname, "../api/schemathesis");

/** Installs the pinned schemathesis unless it is there (race-safe; a minute on first use). */
export function ensureSchemathesis(log: (line: string) => void = () => {}): void {
  ensureVenv(SCHEMATHESIS, log);
}

/** How a run ended: the exit code (null when it was killed at the deadline) and everything it printed. */
export interface SchemathesisRun {
  code: number | null;
  output: string;
  durationMs: number;
}

/**
 * Runs `st run <args>` with tests/api/schemathesis/config.toml and hooks.py, in a scratch directory
 * (no `.hypothesis` or report left behind); killed at `timeoutMs`.
 */
export function runSchemathesis(args: string[], timeoutMs: number): Promise<SchemathesisRun> {
  const cwd = mkdtempSync(join(tmpdir(), "schemathesis-"));
  const started = performance.now();
  const child = spawn(
    venvPath(SCHEMATHESIS, "bin", "st"),
    ["--config-file", join(SETTINGS, "config.toml"), "run", ...args],
    {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PYTHONPATH: SETTINGS,
        SCHEMATHESIS_HOOKS: "hooks",
        NO_COLOR: "1",
        COLUMNS: "120",
      },
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, output, durationMs: Math.round(performance.now() - started) });
    });
  });
}
