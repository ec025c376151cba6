/**
 * The project runs on Node 22. `node scripts/node22.mjs <command> [args…]` runs a command on it: on
 * Node 22 or later as it is; on an older Node with a Node 22 binary — fetched once from the npm registry
 * (`node-<platform>-<arch>`, the registry's own Node release) into .tools/ — first on PATH, so the
 * command and every `node` it starts (npm, tsx, vitest's workers, spawned children) run on Node 22.
 * package.json's scripts start through it; it needs nothing from node_modules, so it runs before `npm ci`.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The Node release fetched when the running Node is older than {@link NODE_FLOOR}. */
export const NODE22_VERSION = "22.23.3";
/** The oldest Node the project runs on: package.json's `engines` (its dependencies' floor) says the same. */
export const NODE_FLOOR = "22.19.0";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TOOLS = join(ROOT, ".tools");
const DIR = join(TOOLS, `node-${NODE22_VERSION}`);

/** True when this process already runs on {@link NODE_FLOOR} or later. */
export function onNode22() {
  const [major = 0, minor = 0, patch = 0] = process.versions.node.split(".").map(Number);
  const [floorMajor = 0, floorMinor = 0, floorPatch = 0] = NODE_FLOOR.split(".").map(Number);
  return major !== floorMajor
    ? major > floorMajor
    : minor !== floorMinor
      ? minor > floorMinor
      : patch >= floorPatch;
}

/**
 * The path of a Node 22 binary: this process's own on NODE_FLOOR or later, else the fetched one
 * (downloaded on first use; safe when several processes race).
 */
export function ensureNode22() {
  if (onNode22()) return process.execPath;
  const binary = join(DIR, "package", "bin", "node");
  if (existsSync(binary)) {
    chmodSync(DIR, 0o755); // a copy fetched by an earlier version of this script was private (0700)
    return binary;
  }
  const pkg = `node-${process.platform}-${process.arch}@${NODE22_VERSION}`;
  process.stderr.write(
    `Node ${process.versions.node} is older than ${NODE_FLOOR}: fetching ${pkg} into .tools/ (first run only)\n`,
  );
  mkdirSync(TOOLS, { recursive: true });
  const staging = mkdtempSync(join(TOOLS, "node-download-"));
  try {
    const packed = execFileSync("npm", ["pack", pkg, "--silent", "--pack-destination", staging], {
      encoding: "utf8",
    });
    execFileSync("tar", ["xzf", join(staging, packed.trim().split("\n").at(-1) ?? ""), "-C", staging]);
    if (!existsSync(join(staging, "package", "bin", "node")))
      throw new Error(`${pkg} did not contain bin/node`);
    chmodSync(staging, 0o755); // readable by the runner's children, which run under their own uids
    try {
      renameSync(staging, DIR);
    } catch (error) {
      if (!existsSync(binary)) throw error; // another process finished first
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/**
 * The flag every deployed process runs with (infra/bundling.ts's NODE_OPTIONS): AsyncLocalStorage
 * without a promise hook on every promise, as on Node 24.
 */
export const NODE_FLAGS = "--experimental-async-context-frame";

/**
 * `env` with Node 22's directory first on PATH (when this process runs on an older Node) and
 * {@link NODE_FLAGS} in NODE_OPTIONS, so what runs locally runs as deployed.
 */
export function node22Env(env = process.env) {
  const options = env.NODE_OPTIONS ?? "";
  // Node 24 and later have async context frames by default (and may not take the experimental name).
  const needsFlag = Number(process.versions.node.split(".")[0]) < 24;
  const flagged =
    !needsFlag || options.split(/\s+/).includes(NODE_FLAGS)
      ? env
      : { ...env, NODE_OPTIONS: `${options} ${NODE_FLAGS}`.trim() };
  if (onNode22()) return flagged;
  return { ...flagged, PATH: `${dirname(ensureNode22())}${delimiter}${env.PATH ?? ""}` };
}

/**
 * Runs `command args…` on Node 22 and exits as it exits (a signal's death as 128 + its number, as a
 * shell reports it). SIGTERM and SIGHUP are passed on; SIGINT is not: Ctrl-C reaches the command from
 * the terminal already, and a second one would cut its shutdown short.
 */
function run([command, ...args]) {
  if (!command) {
    process.stderr.write("usage: node scripts/node22.mjs <command> [args…]\n");
    process.exit(2);
  }
  let env;
  try {
    env = node22Env();
  } catch (error) {
    const reason = String(error instanceof Error ? error.message : error).split("\n")[0];
    process.stderr.write(
      `could not fetch Node ${NODE22_VERSION} (${reason}): install Node ${NODE_FLOOR} or later and run it again\n`,
    );
    process.exit(1);
  }
  const child = spawn(command, args, { stdio: "inherit", env });
  process.on("SIGINT", () => {});
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    process.stderr.write(`${command}: ${error.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) =>
    process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1)),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  run(process.argv.slice(2));
