/**
 * A thread's worktree belongs to that thread. Before a thread's child starts, the runner resolves the
 * registered root on disk (symlinks included): it must lie strictly under the real WORKTREE_BASE and
 * must not be, contain or lie inside a worktree another thread holds open, else 400
 * `thread.worktree_forbidden`. Isolated, every child of one thread runs with the thread's own group as
 * its primary gid (one uid-pool slot reserved as that group while the thread has children), and the
 * worktree is `root:<thread gid>` mode 02770: its children may read and write it, no other child may
 * even enter it. When the thread's last child ends the worktree is closed again (`root:root`) and the
 * group goes back to the pool. Unisolated (the runner not root), nothing can be closed: said once.
 */
import { chmod, chown, mkdir, realpath } from "node:fs/promises";
import { checkWorktreeRoot, forbiddenWorktree, isWithinPath, type Logger } from "@mcpgw/core";
import type { ChildIdentity, Isolation } from "./isolation";
import { checkWorktree } from "./worktree";

/** A worktree held open for one child of a thread: where it really is, and the identity to run with. */
export interface OpenWorktree {
  threadId: string;
  /** The worktree's real path (symlinks resolved): the child's cwd and `{{worktree_root}}`. */
  path: string;
  /** The child's identity with the thread's group as its gid (undefined when not isolated). */
  identity: ChildIdentity | undefined;
}

interface ThreadHold {
  /** The uid-pool slot reserved as the thread's group (its number is the gid). */
  group: ChildIdentity | undefined;
  /** Open worktrees by real path, with the number of children holding each. */
  paths: Map<string, number>;
}

/** Mode of an open worktree: setgid (new files take the thread's group), rwx for owner and group only. */
const OPEN_MODE = 0o2770;

export class ThreadWorktrees {
  private readonly threads = new Map<string, ThreadHold>();
  /** Every open and close runs alone: they read and change the holds. */
  private queue: Promise<unknown> = Promise.resolve();
  private warned = false;

  constructor(
    private readonly options: {
      /** WORKTREE_BASE, normalised. */
      base: string;
      isolation: Isolation;
      logger: Logger;
      /** Directories no worktree may be, hold or lie in (the runner's own). */
      reserved: string[];
    },
  ) {}

  /** Makes the base (0711: children may pass through it, not list it) when it is not there. */
  async prepare(): Promise<void> {
    await mkdir(this.options.base, { recursive: true, mode: 0o711 });
  }

  /**
   * Opens `root` for one child of `threadId` running as `identity`: checked (see the module comment),
   * given to the thread's group, and reachable by the child — else `thread.worktree_forbidden` or
   * `thread.worktree_missing`. Close it with {@link close} once that child has ended.
   */
  open(threadId: string, root: string, identity: ChildIdentity | undefined): Promise<OpenWorktree> {
    return this.alone(async () => {
      const { base, isolation } = this.options;
      checkWorktreeRoot(root, base);
      await checkWorktree(root, undefined);
      const [realBase, path] = await Promise.all([realpath(base), realpath(root)]);
      if (path === realBase || !isWithinPath(realBase, path))
        throw forbiddenWorktree(root, base, `resolves to ${path}, outside the worktree base`);
      const overlaps = (other: string) => isWithinPath(other, path) || isWithinPath(path, other);
      if (this.options.reserved.some(overlaps))
        throw forbiddenWorktree(root, base, "overlaps the runner's own directory");
      for (const [other, hold] of this.threads)
        if (other !== threadId && [...hold.paths.keys()].some(overlaps))
          throw forbiddenWorktree(root, base, "is, holds or lies in another thread's worktree");
      if (!isolation.isolated) this.warnOnce();
      const hold = this.threads.get(threadId) ?? { group: undefined, paths: new Map() };
      try {
        hold.group ??= await isolation.acquire(`thread-group#${threadId}`);
        const child = identity && hold.group ? { uid: identity.uid, gid: hold.group.gid } : identity;
        if (hold.group) {
          await chown(path, 0, hold.group.gid);
          await chmod(path, OPEN_MODE);
        }
        // Every directory on the way must let the child through.
        await checkWorktree(path, child);
        hold.paths.set(path, (hold.paths.get(path) ?? 0) + 1);
        this.threads.set(threadId, hold);
        return { threadId, path, identity: child };
      } catch (error) {
        if (hold.paths.size === 0) await this.release(threadId, hold);
        throw error;
      }
    });
  }

  /** One child of the worktree's thread ended: the last one closes the worktree; the thread's last, its group. */
  close(worktree: OpenWorktree): Promise<void> {
    return this.alone(async () => {
      const hold = this.threads.get(worktree.threadId);
      const count = hold?.paths.get(worktree.path);
      if (!hold || count === undefined) return;
      if (count > 1) {
        hold.paths.set(worktree.path, count - 1);
        return;
      }
      hold.paths.delete(worktree.path);
      if (hold.group) await chown(worktree.path, 0, 0).catch(() => undefined);
      if (hold.paths.size === 0) await this.release(worktree.threadId, hold);
    });
  }

  private async release(threadId: string, hold: ThreadHold): Promise<void> {
    this.threads.delete(threadId);
    await this.options.isolation.release(hold.group);
  }

  private alone<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private warnOnce(): void {
    if (this.warned) return;
    this.warned = true;
    this.options.logger.warn(
      "thread worktrees are not closed to other threads' children: the runner is not root, so every child runs as this user and may read and write every worktree under WORKTREE_BASE",
      { base: this.options.base },
    );
  }
}
