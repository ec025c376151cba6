import { basename } from "node:path";

/**
 * Commands that fetch what they run on their first start (`npx -y pkg`, `uvx tool`, `pnpm dlx`…):
 * such a start can outlast a probe's 10 s deadline once, while it downloads.
 */
export const PACKAGE_RUNNERS: ReadonlySet<string> = new Set([
  "npx",
  "pnpx",
  "bunx",
  "uvx",
  "pipx",
  "uv",
  "pnpm",
  "yarn",
  "bun",
  "deno",
]);

/**
 * Whether a start of `command` may download first — the one kind of start the runner lets finish in
 * the background (within its start timeout) after the probe that asked gave up, when the child's
 * package cache is cold. Every other start ends with the attempt that asked for it.
 */
export function mayDownloadAtStart(command: string): boolean {
  return PACKAGE_RUNNERS.has(basename(command));
}
