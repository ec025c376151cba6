/**
 * A thread's worktree is checked on the runner, the one place that shares the children's filesystem
 * (the admin function may not, when deployed): it must exist, be a directory, and be reachable by the
 * uid its child runs as — or the start is refused in a sentence naming the path, never as the
 * `spawn node ENOENT` the kernel would give.
 */
import { constants } from "node:fs";
import { access, realpath, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { AppError } from "@mcpgw/core";
import type { ChildIdentity } from "./isolation";

/** Throws `thread.worktree_missing` unless `path` is a directory the child (`identity`) may enter. */
export async function checkWorktree(path: string, identity: ChildIdentity | undefined): Promise<void> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) {
    if (info.code === "ENOENT" || info.code === "ENOTDIR")
      throw missing(`The thread's worktree ${path} does not exist on the runner.`);
    if (info.code !== "EACCES") throw info;
    throw missing(`The thread's worktree ${path} cannot be reached by the runner.`);
  }
  if (!info.isDirectory()) throw missing(`The thread's worktree ${path} is not a directory.`);
  if (!identity) {
    // Children run as the runner's own user: the kernel can answer for it.
    if (
      await access(path, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return;
    throw missing(`The thread's worktree ${path} cannot be entered by the runner's user.`);
  }
  // As root the kernel would say yes to everything: walk the path with the child's uid and gid
  // (children have no supplementary groups) — every directory on it must let the child search it.
  const real = await realpath(path);
  for (let dir = real; ; dir = dirname(dir)) {
    const { mode, uid, gid } = await stat(dir);
    const bit = identity.uid === uid ? 0o100 : identity.gid === gid ? 0o010 : 0o001;
    if (!(mode & bit)) {
      throw missing(
        `The thread's worktree ${path} cannot be reached by its server's user (uid ${identity.uid}): ${dir} is not searchable by it (e.g. chmod o+x ${dir}).`,
      );
    }
    if (dir === dirname(dir)) return;
  }
}

function missing(detail: string): AppError {
  return new AppError("thread.worktree_missing", detail);
}
