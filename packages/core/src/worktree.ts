import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { AppError } from "./errors";

/** The directory under the runner's data dir that is WORKTREE_BASE when it is unset. */
export const DEFAULT_WORKTREE_DIR = "mcpgw-worktrees";

/**
 * WORKTREE_BASE's default: `<dataDir>/mcpgw-worktrees`, the data dir being RUNNER_TEMP_DIR or the OS
 * temp dir. The API (which checks roots lexically) and the runner (which checks them on disk) compute
 * the same path from the same variables.
 */
export function defaultWorktreeBase(dataDir: string | undefined = undefined): string {
  return posix.resolve(join(dataDir ?? tmpdir(), DEFAULT_WORKTREE_DIR));
}

/**
 * An absolute path with `.`, `..` and repeated or trailing slashes resolved away (`/a/./b/../c/` →
 * `/a/c`), purely lexically: nothing on disk is consulted. Relative paths and NUL bytes are refused.
 */
export function normaliseAbsolutePath(path: string): string {
  if (path.includes("\0")) throw new AppError("request.invalid", "The path must not contain NUL bytes.");
  if (!path.startsWith("/")) throw new AppError("request.invalid", `'${path}' is not an absolute path.`);
  return posix.resolve(path);
}

/** True when normalised `path` is `base` or lies under it, segment by segment (`/base-evil` is not under `/base`). */
export function isWithinPath(base: string, path: string): boolean {
  const segments = (value: string) => value.split("/").filter(Boolean);
  const [outer, inner] = [segments(base), segments(path)];
  return outer.length <= inner.length && outer.every((segment, index) => inner[index] === segment);
}

/** True when `path` lies strictly under `base` (a worktree is never the base itself). */
export function isInsidePath(base: string, path: string): boolean {
  return path !== base && isWithinPath(base, path);
}

/**
 * A thread's worktree root as stored and handed to its instances, checked lexically (the API may not
 * share the runner's filesystem; the runner checks again on disk): absolute, free of `..` segments
 * (refused, not resolved) and strictly under the worktree base, else `thread.worktree_forbidden`.
 * `.` segments and repeated or trailing slashes are normalised away.
 */
export function checkWorktreeRoot(root: string, base: string): string {
  const normalised = normaliseAbsolutePath(root);
  if (root.split("/").includes("..")) throw forbiddenWorktree(root, base, "has a '..' segment");
  if (!isInsidePath(normaliseAbsolutePath(base), normalised))
    throw forbiddenWorktree(normalised, base, "is outside the worktree base");
  return normalised;
}

/** `thread.worktree_forbidden` (400) for `worktreeRoot`, saying why. */
export function forbiddenWorktree(worktreeRoot: string, base: string, why: string): AppError {
  return new AppError(
    "thread.worktree_forbidden",
    `worktreeRoot '${worktreeRoot}' ${why}: a thread's worktree must be a directory strictly under the worktree base '${base}' (WORKTREE_BASE).`,
    { worktreeRoot, base },
  );
}
