/**
 * The project runs on Node 22. `node scripts/node22.mjs <command> [args…]` runs a command on it: on
 * Node 22 or later as it is; on an older Node with a Node 22 binary — fetched once from the npm registry
 * (`node-<platform>-<arch>`, the registry's own Node release) into .tools/ — first on PATH, so the
 * command and every `node` it starts (npm, tsx, vitest's workers, spawned children) run on Node 22.
 * package.json's scripts start through it; it needs nothing from node_modules, so it runs before `npm ci`.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The Node release fetched when the running Node is older than 22. */
export const NODE22_VERSION = "22.23.3";
/** The oldest Node the project runs on (its `engines` field says the same). */
export const NODE_MAJOR = 22;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TOOLS = join(ROOT, ".tools");
const DIR = join(TOOLS, `node-${NODE22_VERSION}`);

/** True when this process already runs on Node 22 or later. */
export function onNode22() {
  return Number(process.versions.node.split(".")[0]) >= NODE_MAJOR;
}

/**
 * The path of a Node 22 binary: this process's own on Node 22 or later, else the fetched one
 * (downloaded on first use; safe when several processes race).
 */
export function ensureNode22() {
  if (onNode22()) return process.execPath;
  const binary = join(DIR, "package", "bin", "node");
  if (existsSync(binary)) return binary;
  const pkg = `node-${process.platform}-${process.arch}@${NODE22_VERSION}`;
  process.stderr.write(
    `Node ${process.versions.node} is older than ${NODE_MAJOR}: fetching ${pkg} into .tools/ (first run only)\n`,
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

/** `env` with Node 22's directory first on PATH (unchanged when this process runs on Node 22). */
export function node22Env(env = process.env) {
  if (onNode22()) return env;
  return { ...env, PATH: `${dirname(ensureNode22())}${delimiter}${env.PATH ?? ""}` };
}

/** Runs `command args…` on Node 22, forwarding the signals that stop it, and exits as it exits. */
function run([command, ...args]) {
  if (!command) {
    process.stderr.write("usage: node scripts/node22.mjs <command> [args…]\n");
    process.exit(2);
  }
  const child = spawn(command, args, { stdio: "inherit", env: node22Env() });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    process.stderr.write(`${command}: ${error.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  run(process.argv.slice(2));
