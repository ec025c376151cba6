import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import type { Store } from "@mcpgw/aws";
import { AppError, defaultWorktreeBase, errorFields, type Logger } from "@mcpgw/core";
import { observeRunnerChildren } from "@mcpgw/telemetry";
import { limitWrapper, parentDeathWrapper } from "./child-transport";
import { Faces } from "./face";
import { createRunnerServer } from "./http";
import { InstanceManager, type InstanceManagerOptions } from "./instances";
import { createIsolation, DEFAULT_UID_BASE, DEFAULT_UID_COUNT, type Isolation } from "./isolation";
import { limitGaps } from "./limits";
import { Membership } from "./membership";
import { memoryUse } from "./memory-use";
import { QuietClose } from "./quiet-close";
import { createRunnerDir, deadRunnerDirs, sweepDeadRunnerDirs } from "./runner-dir";
import { ThreadWorktrees } from "./thread-worktrees";
import {
  claimUidSlice,
  DEFAULT_UID_SLICE,
  recordedUidSlices,
  sliceLabel,
  sweepFreeSlice,
  type UidSlice,
} from "./uid-slice";

export interface RunnerOptions
  extends Partial<
    Omit<InstanceManagerOptions, "store" | "logger" | "runnerDir" | "isolation" | "worktrees">
  > {
  store: Store;
  logger: Logger;
  token: string;
  port?: number;
  host?: string;
  /** Where the runner makes its own fresh directory (default: the OS temp dir). */
  tempBase?: string;
  /** Package-manager cache root for children (one subdirectory per child uid when isolated). */
  cacheDir?: string;
  /** The host's child uid range, [uidBase, uidBase + uidCount), which its runners share out. */
  uidBase?: number;
  uidCount?: number;
  /**
   * Uids of the range this runner holds (its slice; at least twice `maxChildren`: each child's uid, and
   * the group of each thread with children, come from it). Default 100.
   */
  uidSlice?: number;
  /** Tests may force isolation off (or on); by default it is on exactly when the runner is root. */
  isolation?: Isolation;
  /** The longest `stop()` waits for children to end before it SIGKILLs them all (default 8 s). */
  stopDeadlineMs?: number;
  /** Prometheus text for the face's `GET /metrics` (served only when the face listens on loopback). */
  metricsText?: () => Promise<string>;
  /** Thread worktrees must lie strictly under this path (WORKTREE_BASE; default: `mcpgw-worktrees` under `tempBase`). */
  worktreeBase?: string;
  /**
   * Join the fleet in the table (RUNNER_FLEET): register with a heartbeat and serve only the instances
   * whose lease it holds. `advertiseUrl`: where others reach its face (default: the URL it listens on);
   * `memoryHigh`: the fraction of the task's memory limit from which it takes no new instance while
   * another runner has room (default 0.85; `memoryUse` reads the fraction in use, default its cgroup's,
   * over `memoryLimitBytes` when the cgroup has no limit of its own: a Fargate task's);
   * `drainMs`: how long a stop lets calls in flight end before it ends their children (default 10 s).
   */
  fleet?: {
    id?: string;
    advertiseUrl?: string | undefined;
    leaseMs?: number;
    version?: string;
    memoryHigh?: number;
    memoryUse?: () => number | undefined;
    memoryLimitBytes?: number | undefined;
    drainMs?: number;
  };
}

/** The default of the fleet's `drainMs` (RUNNER_DRAIN_SECONDS). */
export const DEFAULT_DRAIN_MS = 10_000;

/**
 * How long a leaving fleet runner, its drain done, waits for its clients to close the connections they
 * kept idle before it stops listening (see `quietClose`): Node's keep-alive timeout, past which the
 * server closes them itself.
 */
export const LEAVE_QUIET_MS = 5_000;

/** The default of `stopDeadlineMs`: inside a 10 s stop of the whole process, with time to spare. */
export const DEFAULT_STOP_DEADLINE_MS = 8_000;

/** A running stdio runner. */
export interface Runner {
  url: string;
  /** The token requests to the runner must carry. */
  token: string;
  instances: InstanceManager;
  /** The runner's own temp directory (instance HOMEs and secret files live inside it). */
  dir: string;
  /** Whether children run under uids of their own. */
  isolated: boolean;
  /** Its registration and leases, when it is one of a fleet. */
  membership: Membership | undefined;
  /**
   * Stops serving (in a fleet: after a drain of up to `drainMs`, and up to {@link LEAVE_QUIET_MS} for
   * its clients to let go of their connections), abandons starts under way and ends every child
   * (SIGTERM, SIGKILL 2 s later; all of them SIGKILLed at `stopDeadlineMs`), then removes the runner's
   * directory. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Starts the runner's HTTP face on `host:port` (127.0.0.1:0 by default): claims its own slice of the
 * uid range (when root), wipes what a dead predecessor left (its directory; its children, when they ran
 * under the slice now claimed), then serves.
 */
export async function startRunner(options: RunnerOptions): Promise<Runner> {
  const tempBase = options.tempBase ?? tmpdir();
  const maxChildren = options.maxChildren ?? 50;
  // Dead predecessors' dirs, listed once: whose slice to take first, and what to wipe.
  const dead = await deadRunnerDirs(tempBase);
  const slice = options.isolation ? undefined : await claimSlice(options, dead, maxChildren);
  // The uids this runner's children take: its slice; with an isolation given (tests), the range it was told.
  const pool = slice
    ? { uidBase: slice.base, uidCount: slice.count }
    : {
        uidBase: options.uidBase ?? DEFAULT_UID_BASE,
        uidCount: Math.max(options.uidCount ?? 0, uidsFor(maxChildren)),
      };
  const isolation =
    options.isolation ??
    createIsolation({
      logger: options.logger,
      ...pool,
      cacheRoot: options.cacheDir,
    });
  await isolation.sweep();
  if (!parentDeathWrapper()) {
    options.logger.warn(
      "children do not die with the runner: util-linux setpriv (--pdeathsig) is not available, so a runner killed hard leaves them running until its next start sweeps them (when isolated)",
    );
  }
  for (const gap of limitGaps(isolation.isolated, limitWrapper())) options.logger.warn(gap);
  const dir = await createRunnerDir(tempBase, slice ? sliceLabel(slice) : "", dead);
  const worktrees = new ThreadWorktrees({
    base: options.worktreeBase ?? defaultWorktreeBase(options.tempBase),
    isolation,
    logger: options.logger,
    reserved: [dir],
  });
  await worktrees.prepare();
  if (isolation.isolated) {
    // Only worktrees left open to this runner's own slice: another live runner's are its own.
    const closed = await worktrees.closeLeftOpen(
      (gid) => gid >= pool.uidBase && gid < pool.uidBase + pool.uidCount,
    );
    if (closed.length > 0) options.logger.warn("closed worktrees a dead runner left open", { closed });
  }
  let url = "";
  const { fleet } = options;
  const readMemoryUse = fleet?.memoryUse ?? (() => memoryUse(undefined, fleet?.memoryLimitBytes));
  if (fleet && readMemoryUse() === undefined)
    options.logger.info("no memory limit known here: this runner refuses no instance for its memory");
  const membership = fleet
    ? new Membership({
        fleet: options.store.fleet,
        logger: options.logger,
        id: fleet.id ?? randomUUID(),
        url: () => fleet.advertiseUrl ?? url,
        capacity: maxChildren,
        free: () => {
          const used = readMemoryUse();
          return used !== undefined && used >= (fleet.memoryHigh ?? 0.85)
            ? 0
            : maxChildren - instances.childCount;
        },
        version: fleet.version ?? "dev",
        ...(fleet.leaseMs ? { leaseMs: fleet.leaseMs } : {}),
        onLost: (key) => instances.dropPlacement(key),
      })
    : undefined;
  // Runners of a fleet that share a host (a local fleet) sweep what a dead one left there once every
  // lease period, so it is gone soon after its instances moved on (see `sweepDeadRunners`).
  const stopSweeping = membership
    ? repeatEvery(membership.leaseMs, () => sweepDeadRunners(tempBase, slice, options))
    : undefined;
  const instances: InstanceManager = new InstanceManager({
    ...options,
    ...(membership ? { ownership: membership } : {}),
    maxChildren,
    runnerDir: dir,
    isolation,
    worktrees,
    runnerEnv: options.runnerEnv ?? process.env,
  });
  const stopObserving = observeRunnerChildren(() => instances.childrenByState());
  const faces = new Faces({ logger: options.logger });
  const host = options.host ?? "127.0.0.1";
  const quiet = new QuietClose();
  const server = createRunnerServer({
    instances,
    faces,
    logger: options.logger,
    token: options.token,
    ...(options.metricsText && isLoopback(host) ? { metricsText: options.metricsText } : {}),
    ...(membership ? { registered: () => membership.registered, quiet } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host}:${port}`;
  await membership?.join();
  const deadlineMs = options.stopDeadlineMs ?? DEFAULT_STOP_DEADLINE_MS;
  let stopped: Promise<void> | undefined;
  return {
    url,
    token: options.token,
    instances,
    dir,
    isolated: isolation.isolated,
    membership,
    stop() {
      stopped ??= (async () => {
        const drainUntil = Date.now() + (membership ? (fleet?.drainMs ?? DEFAULT_DRAIN_MS) : 0);
        let settledAt = drainUntil;
        if (membership) {
          // New instances go elsewhere from now; the face still serves those it holds while their calls
          // end (for up to `drainMs`), and gives each back (its lease released) once its children are
          // idle and stopped. No connection is kept for reuse from now; the idle ones its clients kept
          // close on their side before it stops listening, so none is cut under a request: a gateway
          // whose session was here is told the instance moved (421), or finds the port closed.
          quiet.leave();
          await membership.drain().catch((error) => {
            options.logger.warn("could not mark this runner draining", errorFields(error));
          });
          await instances.handBack(drainUntil);
          // Within LEAVE_QUIET_MS of the drain's end, however long the hand-back overran it.
          await quiet.quiet(server, Math.min(LEAVE_QUIET_MS, drainUntil + LEAVE_QUIET_MS - Date.now()));
          settledAt = Math.max(drainUntil, Date.now());
        }
        // Then every child left ends within the stop's deadline, counted from the drain's end (however
        // long marking it draining took) or the quiet's, so the whole stop keeps to drain + quiet +
        // deadline.
        const deadline = settledAt + deadlineMs;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
        });
        const outcome = await Promise.race([instances.shutdown(), late]);
        clearTimeout(timer);
        if (outcome === "late") {
          options.logger.warn("runner stop past its deadline: killing every child", { deadlineMs });
          instances.killAll();
        }
        stopObserving();
        stopSweeping?.();
        await faces.close();
        server.closeAllConnections();
        await closed;
        await membership?.leave().catch((error) => {
          options.logger.warn("could not leave the fleet", errorFields(error));
        });
        await rm(dir, { recursive: true, force: true });
        await slice?.release();
      })();
      return stopped;
    },
  };
}

/**
 * The slice of the uid range this runner's children run in — a dead predecessor's on this temp base
 * first — or none when the runner is not root (children then run as the runner itself).
 */
async function claimSlice(
  options: RunnerOptions,
  dead: string[],
  maxChildren: number,
): Promise<UidSlice | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const count = options.uidCount ?? DEFAULT_UID_COUNT;
  // A slice past the range would run children under uids another stack may own.
  if (uidsFor(maxChildren) > count)
    throw new AppError(
      "server.unavailable",
      `RUNNER_UID_COUNT (${count}) holds fewer uids than this runner's children may need: ${uidsFor(maxChildren)}, twice RUNNER_MAX_CHILDREN (a uid per child, a group per thread). Raise RUNNER_UID_COUNT or lower RUNNER_MAX_CHILDREN.`,
    );
  const slice = await claimUidSlice({
    base: options.uidBase ?? DEFAULT_UID_BASE,
    count,
    size: Math.max(Math.min(options.uidSlice ?? DEFAULT_UID_SLICE, count), uidsFor(maxChildren)),
    preferred: recordedUidSlices(dead),
  });
  options.logger.info("runner holds its slice of the child uid range", {
    uidFirst: slice.base,
    uidLast: slice.base + slice.count - 1,
  });
  return slice;
}

/**
 * Wipes what dead runners left on this host: each one's directory (instance HOMEs, secret files) and,
 * under a uid slice nobody holds now (this runner holds it meanwhile), every process left in it.
 */
async function sweepDeadRunners(
  tempBase: string,
  slice: UidSlice | undefined,
  options: Pick<RunnerOptions, "logger" | "cacheDir">,
): Promise<void> {
  const sweepSlice = (first: number) =>
    slice
      ? sweepFreeSlice(first, slice.count, () =>
          createIsolation({
            logger: options.logger,
            uidBase: first,
            uidCount: slice.count,
            cacheRoot: options.cacheDir,
          }).sweep(),
        )
      : Promise.resolve(true);
  try {
    const removed = await sweepDeadRunnerDirs(tempBase, sweepSlice);
    if (removed.length > 0) options.logger.info("swept what dead runners left", { removed });
  } catch (error) {
    options.logger.warn("could not sweep what a dead runner left", errorFields(error));
  }
}

/** Runs `run` every `ms` (each run after the last one ended, never two at once) until the returned stop. */
function repeatEvery(ms: number, run: () => Promise<void>): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => void run().finally(next), ms);
    timer.unref();
  };
  next();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * The uids `maxChildren` children may need at once: one each, and one per thread with children (its
 * group), so a full runner that makes room for a thread's child always has both.
 */
function uidsFor(maxChildren: number): number {
  return 2 * maxChildren;
}

/** Whether `host` is a loopback address (only there is the face's `GET /metrics` served). */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}
