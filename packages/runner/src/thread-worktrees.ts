/**
 * A thread's worktree belongs to that thread. Before a thread's child starts, the runner resolves the
 * registered root on disk (symlinks included): it must lie strictly under the real WORKTREE_BASE and
 * must not be, contain or lie inside a worktree another thread has claimed, else 400
 * `thread.worktree_forbidden`. A thread claims its worktree the first time a child of it starts there:
 * a root-only file in `<base>/.mcpgw-claims` naming the directory (path and inode), which outlives the
 * child, the thread and the runner — a directory serves one thread for as long as it exists, so what a
 * closed thread left is never handed to another; once it is removed (or replaced: another inode, or,
 * isolated, no longer the runner's 02770 directory), the claim is void.
 *
 * Isolated, every child of one thread runs with the thread's own group as its primary gid (one
 * uid-pool slot reserved as that group while the thread has children), and the worktree is
 * `root:<thread gid>` mode 02770: its children may read and write it, no other child may even enter
 * it. When the thread's last child ends the worktree is closed again (`root:root`) and the group goes
 * back to the pool. Unisolated (the runner not root), nothing can be closed: said once, as a warning.
 */
import { createHash } from "node:crypto";
import { chmod, chown, mkdir, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkWorktreeRoot, forbiddenWorktree, isInsidePath, isWithinPath, type Logger } from "@mcpgw/core";
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

/** Where claims are kept, under the base (no worktree may be it or in it). */
export const CLAIMS_DIR = ".mcpgw-claims";

/** A thread's claim on a worktree: its real path and what tells the directory from a new one there. */
interface Claim {
  path: string;
  threadId: string;
  ino: number;
  /** Isolated: the directory is the runner's with {@link OPEN_MODE} (an inode number may be reused). */
  sealed: boolean;
}

export class ThreadWorktrees {
  private readonly threads = new Map<string, ThreadHold>();
  /** Opens and closes of one thread run one after another. */
  private readonly perThread = new Map<string, Promise<void>>();
  private claimQueue: Promise<unknown> = Promise.resolve();
  private warned = false;
  private readonly claims: string;
  /** The base and the claims dir with symlinks resolved, once (`prepare`): what every open compares with. */
  private real: { base: string; claims: string } | undefined;

  constructor(
    private readonly options: {
      /** WORKTREE_BASE, normalised. */
      base: string;
      isolation: Isolation;
      logger: Logger;
      /** Directories no worktree may be, hold or lie in (the runner's own). */
      reserved: string[];
    },
  ) {
    this.claims = join(options.base, CLAIMS_DIR);
  }

  /**
   * Makes the base (0711: children may pass through it, not list it) when it is not there, and its
   * claims directory (0700: the runner's alone).
   */
  async prepare(): Promise<void> {
    await mkdir(this.options.base, { recursive: true, mode: 0o711 });
    await mkdir(this.claims, { recursive: true, mode: 0o700 });
    await chmod(this.claims, 0o700);
    this.real = { base: await realpath(this.options.base), claims: await realpath(this.claims) };
  }

  /**
   * Closes (`root:root`) every claimed worktree still open to a group `ours` says is of this runner's
   * pool — what a runner that died hard left open, before those gids are handed out again (runner start).
   */
  async closeLeftOpen(ours: (gid: number) => boolean): Promise<string[]> {
    const open = await this.liveClaims(() => true);
    const closed: string[] = [];
    for (const claim of open) {
      const now = await stat(claim.path).catch(() => undefined);
      if (!now || now.gid === 0 || !ours(now.gid)) continue;
      await chown(claim.path, process.getuid?.() ?? 0, 0);
      closed.push(claim.path);
    }
    return closed;
  }

  /**
   * Opens `root` for one child of `threadId` running as `identity`: checked (see the module comment),
   * given to the thread's group, and reachable by the child — else `thread.worktree_forbidden` or
   * `thread.worktree_missing`. Close it with {@link close} once that child has ended.
   */
  open(threadId: string, root: string, identity: ChildIdentity | undefined): Promise<OpenWorktree> {
    return this.inThread(threadId, async () => {
      const { base, isolation } = this.options;
      checkWorktreeRoot(root, base);
      await checkWorktree(root, undefined);
      if (!this.real) throw new Error("ThreadWorktrees.open before prepare");
      const path = await realpath(root);
      if (!isInsidePath(this.real.base, path))
        throw forbiddenWorktree(root, base, `resolves to ${path}, outside the worktree base`);
      const overlaps = (other: string) => isWithinPath(other, path) || isWithinPath(path, other);
      if ([...this.options.reserved, this.real.claims].some(overlaps))
        throw forbiddenWorktree(root, base, "overlaps the runner's own directories");
      if (!isolation.isolated) this.warnOnce();
      const hold = this.threads.get(threadId) ?? { group: undefined, paths: new Map() };
      try {
        // (Outside the claims lock: taking a uid-pool slot may scrub what its last holder left.)
        hold.group ??= await isolation.acquire(`thread-group#${threadId}`);
        const group = hold.group;
        await this.claiming(async () => {
          const claims = await this.liveClaims(overlaps);
          if (claims.some((claim) => claim.threadId !== threadId))
            throw forbiddenWorktree(root, base, "is, holds or lies in another thread's worktree");
          if (group) {
            await chown(path, process.getuid?.() ?? 0, group.gid);
            await chmod(path, OPEN_MODE);
          }
          if (!claims.some((claim) => claim.path === path)) {
            const claim: Claim = { path, threadId, ino: (await stat(path)).ino, sealed: !!group };
            await writeFile(this.claimFile(path), JSON.stringify(claim), { flag: "wx", mode: 0o600 });
          }
        });
        const child = identity && group ? { uid: identity.uid, gid: group.gid } : identity;
        // Every directory on the way must let the child through (unisolated: checked above already).
        if (child) await checkWorktree(path, child);
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
    return this.inThread(worktree.threadId, async () => {
      const hold = this.threads.get(worktree.threadId);
      const count = hold?.paths.get(worktree.path);
      if (!hold || count === undefined) return;
      if (count > 1) {
        hold.paths.set(worktree.path, count - 1);
        return;
      }
      hold.paths.delete(worktree.path);
      if (hold.group) await chown(worktree.path, process.getuid?.() ?? 0, 0).catch(() => undefined);
      if (hold.paths.size === 0) await this.release(worktree.threadId, hold);
    });
  }

  /**
   * The claims on directories `wanted` picks that still stand: a claim whose directory is gone or was
   * replaced (another inode) is void, and removed. A file that cannot be read or parsed claims nothing.
   */
  private async liveClaims(wanted: (path: string) => boolean): Promise<Claim[]> {
    const names = await readdir(this.claims).catch(() => [] as string[]);
    const claims = await Promise.all(
      names.map(async (name) => {
        const file = join(this.claims, name);
        const claim = await readFile(file, "utf8")
          .then((text) => JSON.parse(text) as Claim)
          .catch(() => undefined);
        if (typeof claim?.path !== "string" || typeof claim.threadId !== "string" || !wanted(claim.path))
          return [];
        const now = await stat(claim.path).catch(() => undefined);
        const same =
          now?.isDirectory() &&
          now.ino === claim.ino &&
          (!claim.sealed || (now.uid === process.getuid?.() && (now.mode & 0o7777) === OPEN_MODE));
        if (same) return [claim];
        await rm(file, { force: true });
        return [];
      }),
    );
    return claims.flat();
  }

  private claimFile(path: string): string {
    return join(this.claims, createHash("sha256").update(path).digest("hex"));
  }

  private async release(threadId: string, hold: ThreadHold): Promise<void> {
    this.threads.delete(threadId);
    await this.options.isolation.release(hold.group);
  }

  /** Runs `task` after every earlier open and close of the thread (one group per thread, counts kept right). */
  private inThread<T>(threadId: string, task: () => Promise<T>): Promise<T> {
    const run = (this.perThread.get(threadId) ?? Promise.resolve()).then(task, task);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.perThread.set(threadId, settled);
    void settled.then(() => {
      if (this.perThread.get(threadId) === settled) this.perThread.delete(threadId);
    });
    return run;
  }

  /** Runs `task` alone among claim checks and writes (a check and its claim are one step). */
  private claiming<T>(task: () => Promise<T>): Promise<T> {
    const run = this.claimQueue.then(task, task);
    this.claimQueue = run.catch(() => undefined);
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
