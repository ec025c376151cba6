import { posix } from "node:path";
import { AppError } from "./errors";

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

/**
 * A thread's worktree root as stored and handed to its instances: normalised, and — when the deployment
 * sets a worktree base — the base itself or under it, else `thread.worktree_forbidden`.
 */
export function checkWorktreeRoot(root: string, base: string | undefined): string {
  const normalised = normaliseAbsolutePath(root);
  if (base !== undefined && !isWithinPath(normaliseAbsolutePath(base), normalised)) {
    throw new AppError(
      "thread.worktree_forbidden",
      `worktreeRoot '${normalised}' is not under the worktree base '${base}'.`,
      { worktreeRoot: normalised, base },
    );
  }
  return normalised;
}
