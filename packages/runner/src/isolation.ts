/**
 * Children run under identities of their own: a uid (and the gid of the same number) from a pool the
 * runner allocates and recycles. A child then cannot read another child's `/proc/<pid>/environ`, HOME
 * or secret file, nor the runner's environment — the kernel checks the uid. Switching uids needs root
 * (or CAP_SETUID/CAP_SETGID); a runner without it starts anyway, unisolated, and says so once.
 */
import { chown, lstat, mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { AppError, type Logger } from "@mcpgw/core";

/** The uid/gid one child runs as. */
export interface ChildIdentity {
  uid: number;
  gid: number;
}

/** World-writable places a child could leave files in for whoever holds its uid next. */
const SHARED_TEMP_DIRS = ["/tmp", "/var/tmp", "/dev/shm"];

/** How children are kept apart: each under its own identity, or (not root) not at all. */
export interface Isolation {
  readonly isolated: boolean;
  /**
   * An identity for the instance `key` (the same one it had before, when it is free): nothing of an
   * earlier holder of that uid survives — no process, no cache, no file in the shared temp dirs.
   * Undefined when children are not isolated.
   */
  acquire(key: string): Promise<ChildIdentity | undefined>;
  /** Gives the identity back once its child has exited; strays that escaped its process group die. */
  release(identity: ChildIdentity | undefined): Promise<void>;
  /** Makes `path` (the child's HOME, secret file, cache) owned by the child. */
  own(path: string, identity: ChildIdentity | undefined): Promise<void>;
  /** The package-manager cache a child of this identity may use (its own when isolated). */
  cacheDir(identity: ChildIdentity | undefined): Promise<string | undefined>;
  /** Kills whatever still runs under the pool's uids and removes what they left (runner start). */
  sweep(): Promise<void>;
}

export interface IsolationOptions {
  logger: Logger;
  /** First uid of the pool; the pool is [uidBase, uidBase + uidCount). */
  uidBase: number;
  uidCount: number;
  /** Root of the package-manager caches (`npx`/`uvx`), one subdirectory per uid. */
  cacheRoot?: string | undefined;
  /** Whether this process may switch uids; defaults to "is root". */
  canSwitchUids?: boolean;
}

/** The defaults of RUNNER_UID_BASE / RUNNER_UID_COUNT: well above login and system users. */
export const DEFAULT_UID_BASE = 100_000;
export const DEFAULT_UID_COUNT = 1_000;

/** Per-uid state: which instance key it last served, and whether a child holds it now. */
interface Slot {
  uid: number;
  boundTo: string | undefined;
  busy: boolean;
  releasedAt: number;
}

/** The isolation this process can offer: a uid pool when it may switch uids, none otherwise. */
export function createIsolation(options: IsolationOptions): Isolation {
  const canSwitch = options.canSwitchUids ?? process.getuid?.() === 0;
  if (!canSwitch) {
    options.logger.warn(
      "stdio children are not isolated: the runner is not root, so every child runs as this user and can read the others' environment and files (and the runner's). Run the runner as root (the container does) to give each child its own uid.",
      { uid: process.getuid?.() },
    );
    return sharedIdentity(options.cacheRoot);
  }
  return new UidPool(options);
}

function sharedIdentity(cacheRoot: string | undefined): Isolation {
  return {
    isolated: false,
    acquire: async () => undefined,
    release: async () => {},
    own: async () => {},
    cacheDir: async () => cacheRoot,
    sweep: async () => {},
  };
}

class UidPool implements Isolation {
  readonly isolated = true;
  private readonly slots: Slot[];

  constructor(private readonly options: IsolationOptions) {
    this.slots = Array.from({ length: options.uidCount }, (_, i) => ({
      uid: options.uidBase + i,
      boundTo: undefined,
      busy: false,
      releasedAt: 0,
    }));
  }

  async acquire(key: string): Promise<ChildIdentity> {
    const free = this.slots.filter((slot) => !slot.busy);
    const slot =
      free.find((s) => s.boundTo === key) ??
      free.find((s) => s.boundTo === undefined) ??
      free.sort((a, b) => a.releasedAt - b.releasedAt)[0];
    if (!slot) {
      throw new AppError(
        "server.unavailable",
        `The runner has no free child uid (RUNNER_UID_COUNT is ${this.options.uidCount}).`,
      );
    }
    slot.busy = true;
    try {
      if (slot.boundTo !== key) {
        // Another instance's uid: nothing it left may reach this one.
        if (slot.boundTo !== undefined) await scrubUid(slot.uid, this.cachePath(slot.uid));
        slot.boundTo = key;
      }
      return { uid: slot.uid, gid: slot.uid };
    } catch (error) {
      slot.busy = false;
      throw error;
    }
  }

  async release(identity: ChildIdentity | undefined): Promise<void> {
    const slot = identity && this.slots.find((s) => s.uid === identity.uid);
    if (!slot) return;
    try {
      await killUidProcesses(slot.uid);
    } finally {
      slot.busy = false;
      slot.releasedAt = Date.now();
    }
  }

  async own(path: string, identity: ChildIdentity | undefined): Promise<void> {
    if (identity) await chown(path, identity.uid, identity.gid);
  }

  async cacheDir(identity: ChildIdentity | undefined): Promise<string | undefined> {
    if (!identity || !this.options.cacheRoot) return undefined;
    const dir = this.cachePath(identity.uid) as string;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chown(dir, identity.uid, identity.gid);
    return dir;
  }

  async sweep(): Promise<void> {
    const first = this.options.uidBase;
    const last = first + this.options.uidCount - 1;
    await killProcesses((uid) => uid >= first && uid <= last);
    await removeSharedTempFiles((uid) => uid >= first && uid <= last);
    if (this.options.cacheRoot) {
      await mkdir(this.options.cacheRoot, { recursive: true, mode: 0o711 });
      const entries = await readdir(this.options.cacheRoot).catch(() => []);
      await Promise.all(
        entries
          .filter((name) => /^\d+$/.test(name) && Number(name) >= first && Number(name) <= last)
          .map((name) => rm(join(this.options.cacheRoot as string, name), { recursive: true, force: true })),
      );
    }
  }

  private cachePath(uid: number): string | undefined {
    return this.options.cacheRoot ? join(this.options.cacheRoot, String(uid)) : undefined;
  }
}

/** Ends every process of `uid` and removes what it left in the shared temp dirs and its cache. */
async function scrubUid(uid: number, cache: string | undefined): Promise<void> {
  await killUidProcesses(uid);
  await removeSharedTempFiles((owner) => owner === uid);
  if (cache) await rm(cache, { recursive: true, force: true });
}

function killUidProcesses(uid: number): Promise<void> {
  return killProcesses((owner) => owner === uid);
}

/**
 * SIGKILLs every process whose real or effective uid matches, until none is left (a process may fork
 * while its siblings die; a few rounds settle it). Linux only: without /proc there is nothing to scan.
 */
async function killProcesses(matches: (uid: number) => boolean): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const pids = await processesOf(matches);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function processesOf(matches: (uid: number) => boolean): Promise<number[]> {
  const entries = await readdir("/proc").catch(() => [] as string[]);
  const pids = await Promise.all(
    entries
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
        const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
        const zombie = /^State:\s+Z/m.test(status);
        return uids && !zombie && (matches(Number(uids[1])) || matches(Number(uids[2]))) ? Number(name) : 0;
      }),
  );
  return pids.filter((pid) => pid > 0);
}

/** Removes the top-level entries of the shared temp dirs that a matching uid owns. */
async function removeSharedTempFiles(matches: (uid: number) => boolean): Promise<void> {
  for (const dir of SHARED_TEMP_DIRS) {
    const entries = await readdir(dir).catch(() => [] as string[]);
    for (const name of entries) {
      const path = join(dir, name);
      const stat = await lstat(path).catch(() => undefined);
      if (stat && matches(stat.uid)) await rm(path, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}
