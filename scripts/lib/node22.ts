/**
 * A Node 22 binary for the few tools that need it (the MCP conformance suite, the MCP Inspector CLI),
 * fetched once from the npm registry (`node-<platform>-<arch>`) into .tools/ (gitignored). The
 * project itself runs on Node 20; nothing else uses this binary.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

export const NODE22_VERSION = "22.23.3";
const ROOT = resolve(import.meta.dirname, "../..");
const DIR = join(ROOT, ".tools", `node-${NODE22_VERSION}`);

/** The path of the Node 22 binary, downloading it on first use. */
export function ensureNode22(): string {
  const binary = join(DIR, "package", "bin", "node");
  if (existsSync(binary)) return binary;
  const pkg = `node-${process.platform}-${process.arch}@${NODE22_VERSION}`;
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  const tarball = execFileSync("npm", ["pack", pkg, "--silent", "--pack-destination", DIR], { encoding: "utf8" }).trim();
  execFileSync("tar", ["xzf", join(DIR, tarball.split("\n").at(-1) ?? ""), "-C", DIR]);
  if (!existsSync(binary)) throw new Error(`${pkg} did not contain bin/node`);
  return binary;
}
