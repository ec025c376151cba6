/**
 * A Node 22 binary for the few tools that need it (the MCP conformance suite, the MCP Inspector CLI),
 * fetched once from the npm registry (`node-<platform>-<arch>`) into .tools/ (gitignored). The
 * project itself runs on Node 20; nothing else uses this binary.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

export const NODE22_VERSION = "22.23.3";
const ROOT = resolve(import.meta.dirname, "../..");
const TOOLS = join(ROOT, ".tools");
const DIR = join(TOOLS, `node-${NODE22_VERSION}`);

/** The path of the Node 22 binary, downloading it on first use (safe when several processes race). */
export function ensureNode22(): string {
  const binary = join(DIR, "package", "bin", "node");
  if (existsSync(binary)) return binary;
  const pkg = `node-${process.platform}-${process.arch}@${NODE22_VERSION}`;
  mkdirSync(TOOLS, { recursive: true });
  const staging = mkdtempSync(join(TOOLS, "node-download-"));
  try {
    const packed = execFileSync("npm", ["pack", pkg, "--silent", "--pack-destination", staging], {
      encoding: "utf8",
    });
    execFileSync("tar", ["xzf", join(staging, packed.trim().split("\n").at(-1) ?? ""), "-C", staging]);
    if (!existsSync(join(staging, "package", "bin", "node")))
      throw new Error(`${pkg} did not contain bin/node`);
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
