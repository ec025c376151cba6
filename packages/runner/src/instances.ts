import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { recordFailure, SealError, type Store } from "@mcpgw/aws";
import {
  AppError,
  DEFAULT_CHILD_LIMITS,
  describeBytes,
  errorFields,
  isPerCaller,
  type Logger,
  limitFromExit,
  limitMessage,
  type PlainStdioServer,
  placementKey,
  planSpawn,
  type ResolvedLimits,
  renderSecretFile,
  resolveLimits,
  SERVING_MAX_AGE_MS,
  type ServerRecord,
  servingOlder,
  UNREADABLE_SECRETS,
} from "@mcpgw/core";
import { jsonSchemaValidator, scrubSecrets } from "@mcpgw/upstream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CHILD_SESSION_CAPABILITIES, ChildBridge } from "./bridge";
import { ChildTransport, killGroupNow } from "./child-transport";
import type { ChildIdentity, Isolation } from "./isolation";
import { LimitWatch } from "./limits";
import type { InstanceOwnership } from "./membership";
import { ProbeRelay } from "./probe-relay";
import { launchedAgo } from "./proc";
import { DEFAULT_CHILD_REPLY_BUDGET_BYTES, ReplyBudget } from "./reply-budget";
import { startFailureDetail } from "./start-failure";
import { mayDownloadAtStart } from "./start-rules";
import type { OpenWorktree, ThreadWorktrees } from "./thread-worktrees";

/** A live child process and the MCP client session the runner holds with it. */
export interface Instance {
  key: string;
  serverId: string;
  threadId: string | undefined;
  /** The caller principal a `per_caller` server's child is for (undefined: shared, or a thread's). */
  caller: string | undefined;
  client: Client;
  transport: ChildTransport;
  /** Between the child and its face's callers: calls in flight, the child's requests for input. */
  bridge: ChildBridge;
  /** The status generation it was spawned for: a newer one gets a new child, and this one is retired. */
  generation: number;
  startedAt: number;
  lastUsed: number;
  busy: number;
  /** The uid/gid it runs as (undefined when children are not isolated). */
  identity: ChildIdentity | undefined;
  /** Its HOME and TMPDIR (with its secret file), removed when it ends. */
  home: string;
  /** Its thread's worktree, held open for it until it ends. */
  worktree: OpenWorktree | undefined;
  /** Settles once the child has exited and everything it had is cleaned up. */
  ended: Promise<void>;
  /** The liveness check under way, if any (concurrent suspicions share one ping). */
  liveness?: Promise<boolean> | undefined;
}

export interface InstanceManagerOptions {
  store: Store;
  logger: Logger;
  /** The runner's own environment; children see only the allow-listed part of it. */
  runnerEnv: Record<string, string | undefined>;
  /** The runner's own directory, where per-instance dirs (the child's HOME, secret files) are made. */
  runnerDir: string;
  /** How children are kept apart (their own uids), and their package-manager caches. */
  isolation: Isolation;
  /** Thread worktrees: checked on disk, and open to their own thread's children only. */
  worktrees: ThreadWorktrees;
  /** Idle instances are stopped after this long. */
  idleMs?: number;
  /** The most children alive at once. */
  maxChildren?: number;
  /**
   * The longest a child may take to answer `initialize` while someone waits for it (a thread start; a
   * package runner's first, cold start after its caller left — first `npx` runs download).
   */
  startTimeoutMs?: number;
  /**
   * How long a child has to answer the runner's ping once a request to it went unanswered (its caller
   * gave up, or it timed out); a child that does not is hung, and is killed.
   */
  pingTimeoutMs?: number;
  /** How long a cached config/generation check stays valid. */
  configTtlMs?: number;
  /** The longest line a child may write (one JSON-RPC message); past it the child is killed. */
  maxMessageBytes?: number;
  /**
   * The most of one child's replies the runner holds, read and not yet sent to their callers (default
   * {@link DEFAULT_CHILD_REPLY_BUDGET_BYTES}); a reply past it is answered as an error naming the limit.
   */
  childReplyBudgetBytes?: number;
  /** How long a call that asked its caller for input waits for the answer (default 10 min). */
  parkMs?: number;
  /**
   * How long a request waits at a child for another caller's requests to end, when either caller can
   * be asked for input (default 10 s; see caller-gate.ts).
   */
  gateWaitMs?: number;
  /** How long a burst of a child's list_changed is gathered into one probe job (default 250 ms). */
  relayDebounceMs?: number;
  /** Every child's limits unless its server sets its own (default {@link DEFAULT_CHILD_LIMITS}). */
  childLimits?: ResolvedLimits;
  /** How often the children's use is summed against their limits (default 500 ms). */
  limitSampleMs?: number;
  /**
   * How often the runner looks whether the servers it has children of still exist, and stops the
   * children of those that do not (default {@link DEFAULT_GONE_CHECK_MS}: one sweep interval).
   */
  goneCheckMs?: number;
  /**
   * In a fleet: the leases its instances are served under (each instance's placement key — its server,
   * or its server and thread — held by one runner at a time). None for a runner on its own.
   */
  ownership?: InstanceOwnership;
}

/** A spawn under way: how many requests wait for it, and how to abandon it. */
interface Starting {
  /** The status generation it is spawned for. */
  generation: number;
  controller: AbortController;
  /** Requests waiting for it; when the last one goes away the start is abandoned. */
  waiters: number;
  /** Set once known: a package runner's cold first start, which may finish with nobody waiting. */
  mayOutliveCallers: boolean;
  settled: boolean;
  /** Its child, once made. */
  transport?: ChildTransport;
  /** Whether an outliving start is being watched for the server it launched (see `watchOrphan`). */
  watched?: boolean;
}

/**
 * How long the server a package runner launched may take to answer `initialize` once nobody waits for
 * its start: past it, it is not fetching but not answering, and the start is abandoned.
 */
const LAUNCHED_SERVER_GRACE_S = 2;

/** The default of `goneCheckMs`: the deployed sweep's interval. */
export const DEFAULT_GONE_CHECK_MS = 60_000;

/** The longest a retired child (of an older generation) is kept for its calls in flight to end. */
export const RETIRE_MAX_MS = 60_000;

/** The default of `pingTimeoutMs`. */
export const DEFAULT_PING_TIMEOUT_MS = 5_000;

const CLIENT_INFO = { name: "mcp-gateway-runner", version: "1.0.0" };

/**
 * The runner's children: one per project-scoped server (shared by every caller; one per caller
 * principal when the server's isolation is `per_caller`) and one per (server, thread) for
 * thread-scoped ones — spawned lazily under their own uid, one per generation (a change that reaches
 * the child starts a new one, and the older one is retired once its calls end), stopped at once when
 * their server is deleted or disabled, reaped when idle, capped in number, and killed with their whole
 * process group.
 *
 * Children end with their attempt: a start is abandoned (the child killed, its files removed) once
 * every request waiting for it has gone — the probe that gave up closed its connection — save a
 * package runner's cold first start (see {@link mayDownloadAtStart}), which may finish in the
 * background within `startTimeoutMs` while it fetches (until the server it launched has had a few
 * seconds to answer). A child that leaves a request unanswered and then fails a ping
 * within `pingTimeoutMs` is hung, and is killed; the next use spawns a new one.
 */
export class InstanceManager {
  private readonly instances = new Map<string, Promise<Instance>>();
  /** What each spawn promise in `instances` resolved to (read synchronously: never await a spawn here). */
  private readonly spawned = new WeakMap<Promise<Instance>, Instance>();
  /** Acquires under way, by placement key (its lease is not given back meanwhile). */
  private readonly acquiring = new Map<string, number>();
  /** Spawns under way, by their promise (the values of `instances` while they start). */
  private readonly starts = new Map<Promise<Instance>, Starting>();
  /** Every child not yet exited, started or starting (what a hard stop must kill). */
  private readonly children = new Set<Instance>();
  private closing = false;
  private readonly restarts = new Map<string, number>();
  private readonly stopping = new Set<Instance>();
  /** Started children not yet exited, and spawns under way: together never more than maxChildren. */
  private readonly live = new Set<Instance>();
  private spawning = 0;
  private readonly configCache = new Map<
    string,
    { at: number; value: Promise<{ server: PlainStdioServer; generation: number; serving?: number }> }
  >();
  /** Per instance key, the child of an older generation serving while a newer one connects. */
  private readonly retiring = new Map<string, Instance>();
  /** Children of older generations that take no new calls and are stopped once idle (see `retire`). */
  private readonly draining = new Set<Instance>();
  /** Per server, the lowest generation that may still run (raised when the server is stopped). */
  private readonly floors = new Map<string, number>();
  private readonly reaper: NodeJS.Timeout;
  private readonly goneCheck: NodeJS.Timeout;
  private readonly idleMs: number;
  private readonly maxChildren: number;
  private readonly pingTimeoutMs: number;
  private readonly relay: ProbeRelay;
  private readonly limitWatch: LimitWatch;

  constructor(private readonly options: InstanceManagerOptions) {
    this.limitWatch = new LimitWatch(options.limitSampleMs);
    this.relay = new ProbeRelay({
      jobs: options.store.jobs,
      logger: options.logger,
      ...(options.relayDebounceMs === undefined ? {} : { debounceMs: options.relayDebounceMs }),
    });
    this.idleMs = options.idleMs ?? 10 * 60_000;
    this.maxChildren = options.maxChildren ?? 50;
    this.pingTimeoutMs = options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    this.reaper = setInterval(() => void this.reapIdle(), Math.max(250, Math.min(this.idleMs / 2, 30_000)));
    this.reaper.unref();
    this.goneCheck = setInterval(() => void this.stopGone(), options.goneCheckMs ?? DEFAULT_GONE_CHECK_MS);
    this.goneCheck.unref();
  }

  /**
   * Runs `use` with the live instance of (server, thread), spawning it when there is none or when its
   * config changed since it was spawned. `fresh` reads the config now instead of from the short cache;
   * `signal` aborts when the request that asked has gone (its caller gave up or disconnected).
   */
  async use<T>(
    serverId: string,
    threadId: string | undefined,
    use: (instance: Instance) => Promise<T>,
    options: AcquireOptions = {},
  ): Promise<T> {
    const instance = await this.acquire(serverId, threadId, options);
    // The caller left while it waited: nothing to serve (a call must not reach the child for nobody).
    options.signal?.throwIfAborted();
    const release = this.hold(instance);
    try {
      return await use(instance);
    } finally {
      release();
    }
  }

  /**
   * Marks the instance in use (never reaped, never made way for) until the returned release is
   * called (once; later calls do nothing) — for a use that outlives a call, e.g. a streamed response.
   */
  hold(instance: Instance): () => void {
    instance.busy++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      instance.busy--;
      instance.lastUsed = Date.now();
    };
  }

  /**
   * The live instance, started if needed (what `POST /threads/{t}/servers/{s}` does). A caller whose
   * `signal` aborts stops waiting at once; a start nobody waits for any more is abandoned.
   */
  async acquire(
    serverId: string,
    threadId: string | undefined,
    options: AcquireOptions = {},
  ): Promise<Instance> {
    const { signal } = options;
    this.refuseWhenClosing();
    signal?.throwIfAborted();
    const { server, generation, serving } = await this.config(serverId, options.fresh);
    if (server.scope === "project" && threadId) {
      throw new AppError(
        "request.invalid",
        `Server '${server.name}' is project-scoped; it has no thread instances.`,
      );
    }
    // In a fleet, only the holder of the instance's lease serves it (another live holder: a redirect).
    // Until this acquire ends, a child of its placement that exits meanwhile does not give the lease back.
    const placement = placementKey(serverId, threadId);
    this.acquiring.set(placement, (this.acquiring.get(placement) ?? 0) + 1);
    try {
      await this.options.ownership?.own(placement, { followed: options.followed === true });
      return await this.acquireOwned(serverId, threadId, server, generation, serving, options);
    } finally {
      const left = (this.acquiring.get(placement) ?? 1) - 1;
      if (left > 0) this.acquiring.set(placement, left);
      else this.acquiring.delete(placement);
      this.releaseUnused(placement);
    }
  }

  /** The rest of {@link acquire}, under the instance's lease. */
  private async acquireOwned(
    serverId: string,
    threadId: string | undefined,
    server: PlainStdioServer,
    generation: number,
    serving: number | undefined,
    options: AcquireOptions,
  ): Promise<Instance> {
    const { signal } = options;
    const caller = !threadId && isPerCaller(server) ? (options.caller ?? PROBE_CALLER) : undefined;
    const key = instanceKey(serverId, threadId, caller);
    const older = this.servingChild(key, serving, options.generation);
    if (older) {
      older.lastUsed = Date.now();
      return older;
    }
    const existing = this.instances.get(key);
    if (existing) {
      const instance = await this.wait(existing, signal).catch((error) => {
        if (signal?.aborted) throw error;
        return undefined;
      });
      // A new generation is a change that reaches the child (an edit of name or timeout is not).
      if (instance && instance.generation === generation && !instance.transport.exitStatus) {
        instance.lastUsed = Date.now();
        return instance;
      }
      if (instance && this.instances.get(key) === existing) {
        // The child of the generation that serves while this one connects is kept aside, not stopped.
        if (instance.generation === serving && !instance.transport.exitStatus) {
          this.instances.delete(key);
          this.retiring.set(key, instance);
        } else {
          this.countRestart(key);
          await this.stop(instance, "config changed");
        }
      }
    }
    const current = this.instances.get(key);
    if (current && current !== existing) return this.wait(current, signal);
    this.refuseWhenClosing();
    signal?.throwIfAborted();
    // The lease may have been lost while this waited (a lapse's fence): no child without it.
    if (this.options.ownership && !this.options.ownership.holds(placementKey(serverId, threadId)))
      throw new AppError("runner.not_owner", "This runner no longer holds the instance's lease.");
    const starting = this.spawn(key, serverId, threadId, caller, generation);
    this.instances.set(key, starting);
    starting.then(
      (instance) => this.spawned.set(starting, instance),
      () => {
        if (this.instances.get(key) === starting) this.instances.delete(key);
        this.releaseUnused(placementKey(serverId, threadId));
      },
    );
    return this.wait(starting, signal);
  }

  /**
   * The child that serves `wanted` when that is the older generation serving while a newer one connects:
   * the one kept aside, or the one still live. A kept child no longer serving is stopped here.
   */
  private servingChild(key: string, serving: number | undefined, wanted: number | undefined) {
    const kept = this.retiring.get(key);
    if (kept && (kept.generation !== serving || kept.transport.exitStatus)) {
      this.retiring.delete(key);
      void this.retire(kept);
    }
    if (wanted === undefined || wanted !== serving) return undefined;
    const pending = this.instances.get(key);
    const live = pending && this.spawned.get(pending);
    const candidate = this.retiring.get(key) ?? live;
    return candidate?.generation === wanted && !candidate.transport.exitStatus ? candidate : undefined;
  }

  /**
   * Whether the instance's child still answers: a ping within `pingTimeoutMs` (an error answer counts:
   * it answered). One that does not is hung and is killed at once (SIGKILL to its group: a stopped
   * process takes no SIGTERM), so the next use spawns a new one. Concurrent checks share one ping.
   */
  checkAlive(instance: Instance): Promise<boolean> {
    if (instance.transport.exitStatus) return Promise.resolve(false);
    instance.liveness ??= (async () => {
      try {
        await instance.client.ping({ timeout: this.pingTimeoutMs });
        return true;
      } catch (error) {
        if (instance.transport.exitStatus) return false;
        if (!(error instanceof McpError) || error.code !== ErrorCode.RequestTimeout) return true;
        this.options.logger.warn("child not answering", {
          serverId: instance.serverId,
          threadId: instance.threadId,
          pid: instance.transport.pid,
          pingTimeoutMs: this.pingTimeoutMs,
        });
        this.countRestart(instance.key);
        await this.stop(instance, "not answering", 0);
        return false;
      } finally {
        instance.liveness = undefined;
      }
    })();
    return instance.liveness;
  }

  /** Live instances, for `GET /servers` (a child still starting is not listed yet). */
  async list() {
    return this.started()
      .filter((instance) => !instance.transport.exitStatus)
      .map((instance) => ({
        serverId: instance.serverId,
        threadId: instance.threadId ?? null,
        caller: instance.caller ?? null,
        pid: instance.transport.pid ?? null,
        uptimeMs: Date.now() - instance.startedAt,
        restarts: this.restarts.get(instance.key) ?? 0,
        inFlight: instance.busy,
      }));
  }

  /** Stops every instance of a thread; returns how many were stopped. */
  async stopThread(threadId: string): Promise<number> {
    const keys = [...this.instances.keys()].filter((key) => key.endsWith(`#${threadId}`));
    return this.stopKeys(keys, "thread closed");
  }

  /**
   * Stops every instance (project and thread ones) of a server that was deleted, disabled or
   * reconfigured: those spawned below `belowGeneration`, or all of them. Instances spawned later for a
   * generation below it are refused too. Resolves once their processes, dirs and secret files are gone
   * — or, with `drain` (a newer generation settled), at once: they are retired (see `retire`).
   */
  async stopServer(serverId: string, belowGeneration?: number, { drain = false } = {}): Promise<number> {
    this.configCache.delete(serverId);
    if (belowGeneration !== undefined)
      this.floors.set(serverId, Math.max(belowGeneration, this.floors.get(serverId) ?? 0));
    const keys = [...this.instances.keys()].filter(
      (key) => key === serverId || key.startsWith(`${serverId}#`) || key.startsWith(`${serverId}@`),
    );
    this.callOffStarts(keys, "its server changed", belowGeneration);
    const instances = await Promise.all(keys.map((key) => this.instances.get(key)?.catch(() => undefined)));
    for (const [key, kept] of this.retiring) {
      if (kept.serverId !== serverId) continue;
      if (belowGeneration !== undefined && kept.generation >= belowGeneration) continue;
      this.retiring.delete(key);
      instances.push(kept);
    }
    const stale = instances.filter(
      (instance): instance is Instance =>
        instance !== undefined && (belowGeneration === undefined || instance.generation < belowGeneration),
    );
    for (const instance of stale) if (belowGeneration !== undefined) this.countRestart(instance.key);
    if (drain && belowGeneration !== undefined) {
      for (const instance of stale) void this.retire(instance);
      return stale.length;
    }
    for (const instance of this.draining) {
      if (instance.serverId !== serverId) continue;
      if (belowGeneration !== undefined && instance.generation >= belowGeneration) continue;
      this.draining.delete(instance);
      stale.push(instance);
    }
    await Promise.all(stale.map((instance) => this.stop(instance, "server changed")));
    return stale.length;
  }

  /**
   * Stops everything and stops reaping (runner shutdown): new requests are refused, starts under way
   * are abandoned (their children killed), live children get SIGTERM and, 2 s later, SIGKILL.
   */
  async shutdown(): Promise<void> {
    this.closing = true;
    clearInterval(this.reaper);
    clearInterval(this.goneCheck);
    this.relay.close();
    this.limitWatch.close();
    const reason = new AppError("server.unavailable", "The runner is stopping.");
    for (const start of this.starts.values()) start.controller.abort(reason);
    await Promise.allSettled([...this.starts.keys()]);
    await this.stopKeys([...this.instances.keys()], "shutdown");
    await Promise.all([...this.children].map((instance) => this.stop(instance, "shutdown")));
  }

  /**
   * A fleet runner's drain, before its shutdown: each placement with no call in flight and no start
   * under way has its children stopped (and so its lease given back: its callers go to another runner
   * from then on); the others as their calls end, until `deadline` (epoch ms). Resolves once none is
   * left, or at the deadline.
   */
  async handBack(deadline: number): Promise<void> {
    for (;;) {
      const placements = new Map<string, { keys: Set<string>; busy: boolean }>();
      for (const [key, pending] of this.instances) {
        const placement = placementOfInstance(key);
        const entry = placements.get(placement) ?? { keys: new Set<string>(), busy: false };
        placements.set(placement, entry);
        entry.keys.add(key);
        const instance = this.spawned.get(pending);
        if (!instance || !isIdle(instance)) entry.busy = true;
      }
      for (const child of this.draining) {
        const entry = placements.get(placementKey(child.serverId, child.threadId));
        if (entry && !isIdle(child)) entry.busy = true;
      }
      if (placements.size === 0 || Date.now() >= deadline) return;
      const idle = [...placements.values()]
        .filter((entry) => !entry.busy)
        .flatMap((entry) => [...entry.keys]);
      await this.stopKeys(idle, "handed back: the runner is draining");
      if (idle.length === 0) await delay(100);
    }
  }

  /** SIGKILLs every child's process group now, synchronously (a stop past its deadline). */
  killAll(): void {
    this.closing = true;
    for (const instance of this.children) killGroupNow(instance.transport);
  }

  /** Number of live children. */
  get size(): number {
    return this.instances.size;
  }

  /** Children running or starting: what counts against `maxChildren`. */
  get childCount(): number {
    return this.live.size + this.spawning;
  }

  /**
   * Children by state: `starting` (spawns under way), `busy` (serving a call), `idle`, and `draining`
   * (an older generation's, taking no new calls, or stopping).
   */
  childrenByState(): Record<"starting" | "busy" | "idle" | "draining", number> {
    const counts = { starting: this.starts.size, busy: 0, idle: 0, draining: 0 };
    for (const child of this.live) {
      if (this.draining.has(child) || this.stopping.has(child)) counts.draining++;
      else if (child.busy > 0) counts.busy++;
      else counts.idle++;
    }
    return counts;
  }

  private async stopKeys(keys: string[], why: string): Promise<number> {
    this.callOffStarts(keys, why);
    const instances = await Promise.all(keys.map((key) => this.instances.get(key)?.catch(() => undefined)));
    await Promise.all(instances.map((instance) => (instance ? this.stop(instance, why) : undefined)));
    return instances.filter(Boolean).length;
  }

  /** Aborts the starts under way of these keys (those spawned below `belowGeneration`, when given). */
  private callOffStarts(keys: Iterable<string>, why: string, belowGeneration?: number): void {
    for (const key of keys) {
      const pending = this.instances.get(key);
      const start = pending && this.starts.get(pending);
      if (start && (belowGeneration === undefined || start.generation < belowGeneration))
        start.controller.abort(new AppError("server.unavailable", `The start was called off: ${why}.`));
    }
  }

  /** The instances whose start finished (never waits for one under way). */
  private started(): Instance[] {
    return [...this.instances.values()].flatMap((promise) => {
      const instance = this.spawned.get(promise);
      return instance ? [instance] : [];
    });
  }

  /** Drops `instance` from the live map, if it is still the one there (a newer spawn is left alone). */
  private forget(instance: Instance): void {
    const current = this.instances.get(instance.key);
    if (current && this.spawned.get(current) === instance) this.instances.delete(instance.key);
  }

  /** In a fleet: gives the lease of `placement` back once no child of it runs or starts here. */
  private releaseUnused(placement: string): void {
    const { ownership } = this.options;
    if (!ownership) return;
    const inUse =
      this.acquiring.has(placement) ||
      [...this.instances.keys()].some((key) => placementOfInstance(key) === placement) ||
      [...this.children].some((child) => placementKey(child.serverId, child.threadId) === placement);
    if (!inUse) ownership.release(placement);
  }

  /**
   * Ends every child of `placement` at once (its lease moved to another runner): SIGKILL to their
   * groups, so no instance has children on two runners.
   */
  dropPlacement(placement: string): void {
    this.callOffStarts(
      [...this.instances.keys()].filter((key) => placementOfInstance(key) === placement),
      "another runner serves this instance now",
    );
    for (const child of this.children) {
      if (placementKey(child.serverId, child.threadId) !== placement) continue;
      this.stopping.add(child);
      killGroupNow(child.transport);
    }
  }

  private countRestart(key: string): void {
    this.restarts.set(key, (this.restarts.get(key) ?? 0) + 1);
  }

  private config(serverId: string, fresh = false) {
    const ttl = this.options.configTtlMs ?? 1_000;
    const cached = this.configCache.get(serverId);
    if (!fresh && cached && Date.now() - cached.at < ttl) return cached.value;
    const value = (async () => {
      const [server, status] = await Promise.all([
        this.options.store.servers.getPlain(serverId),
        this.options.store.statuses.get(serverId),
      ]);
      if (server?.transport !== "stdio" || !status) {
        throw new AppError("server.not_found", `No stdio server with id '${serverId}'.`);
      }
      if (!server.sealIntact) throw new AppError("upstream.error", UNREADABLE_SECRETS);
      if (status.generation < (this.floors.get(serverId) ?? 0)) {
        throw new AppError("server.unavailable", `Server '${server.name}' changed; retry.`);
      }
      const serving = servingOlder(status);
      return {
        server: server as PlainStdioServer,
        generation: status.generation,
        ...(serving === undefined ? {} : { serving }),
      };
    })();
    this.configCache.set(serverId, { at: Date.now(), value });
    value.catch(() => this.configCache.delete(serverId));
    return value;
  }

  private refuseWhenClosing(): void {
    if (this.closing) throw new AppError("server.unavailable", "The runner is stopping.");
  }

  /**
   * `spawn`, as one waiting request sees it: it counts as a waiter of a start under way until its
   * `signal` aborts (then it is rejected at once, and the start is abandoned when it was the last).
   */
  private wait(spawn: Promise<Instance>, signal: AbortSignal | undefined): Promise<Instance> {
    const start = this.starts.get(spawn);
    if (!start) return spawn;
    start.waiters++;
    if (!signal) return spawn;
    return new Promise<Instance>((resolve, reject) => {
      const leave = () => {
        reject(signal.reason);
        start.waiters--;
        if (start.waiters === 0) this.abandon(start);
      };
      if (signal.aborted) return leave();
      signal.addEventListener("abort", leave, { once: true });
      spawn.then(
        (instance) => {
          signal.removeEventListener("abort", leave);
          resolve(instance);
        },
        (error) => {
          signal.removeEventListener("abort", leave);
          reject(error);
        },
      );
    });
  }

  /** A start nobody waits for: aborted, unless it may finish in the background. */
  private abandon(start: Starting): void {
    if (start.settled || start.waiters > 0) return;
    if (start.mayOutliveCallers) void this.watchOrphan(start);
    else start.controller.abort(new AppError("server.unavailable", "Nobody waits for this start any more."));
  }

  /**
   * A package runner's cold start that nobody waits for goes on while it fetches (it has launched no
   * process yet); once the server it launched has had LAUNCHED_SERVER_GRACE_S without answering, the
   * start is abandoned like any other (its child killed, its files removed). Checked twice a second,
   * until the start settles or someone waits for it again.
   */
  private async watchOrphan(start: Starting): Promise<void> {
    if (start.watched) return;
    start.watched = true;
    try {
      while (!start.settled && start.waiters === 0) {
        const pid = start.transport?.pid;
        const ago = pid === undefined ? undefined : await launchedAgo(pid);
        if (ago !== undefined && ago >= LAUNCHED_SERVER_GRACE_S) {
          start.controller.abort(
            new AppError(
              "server.unavailable",
              "Nobody waits for this start any more, and the server it launched does not answer.",
            ),
          );
          return;
        }
        await delay(500, undefined, { ref: false });
      }
    } finally {
      start.watched = false;
    }
  }

  private spawn(
    key: string,
    serverId: string,
    threadId: string | undefined,
    caller: string | undefined,
    generation: number,
  ) {
    const start: Starting = {
      generation,
      controller: new AbortController(),
      waiters: 0,
      mayOutliveCallers: false,
      settled: false,
    };
    const spawning = (async () => {
      await this.makeRoom(start.controller.signal);
      try {
        const instance = await this.start(key, serverId, threadId, caller, generation, start);
        // Idle from its start being ready, not from its spawn: a slow start is not reaped before its first use.
        instance.lastUsed = Date.now();
        if (!instance.transport.exitStatus) this.live.add(instance);
        return instance;
      } finally {
        this.spawning--;
      }
    })();
    this.starts.set(spawning, start);
    const settle = () => {
      start.settled = true;
      this.starts.delete(spawning);
    };
    spawning.then(settle, settle);
    return spawning;
  }

  private async start(
    key: string,
    serverId: string,
    threadId: string | undefined,
    caller: string | undefined,
    generation: number,
    start: Starting,
  ): Promise<Instance> {
    const { store, isolation } = this.options;
    const { signal } = start.controller;
    const record = await store.servers.get(serverId).catch((error: unknown) => {
      if (error instanceof SealError)
        throw new AppError("upstream.error", UNREADABLE_SECRETS, {}, { cause: error });
      throw error;
    });
    if (record?.transport !== "stdio")
      throw new AppError("server.not_found", `No stdio server with id '${serverId}'.`);
    signal.throwIfAborted();
    let identity = await isolation.acquire(key);
    let home: string | undefined;
    let worktree: OpenWorktree | undefined;
    /** Set once the instance exists: from then on its exit (or failed spawn) cleans up, in onExit. */
    let handedOver = false;
    // What a child's stderr must never carry into lastError or a log line: its env and secret values.
    let scrub: string[] = Object.values(record.env);
    try {
      home = await mkdtemp(join(this.options.runnerDir, "i-"));
      await isolation.own(home, identity);
      const registered = await this.worktreeOf(record, threadId, home);
      // Refused here in a sentence naming the path, not as `spawn … ENOENT` from the kernel; the
      // child runs in the thread's group, which alone may enter the worktree.
      if (threadId && registered) {
        worktree = await this.options.worktrees.open(threadId, registered, identity);
        identity = worktree.identity;
      }
      const worktreeRoot = worktree?.path ?? registered;
      signal.throwIfAborted();
      const secret = await this.writeSecretFile(record, home, identity);
      scrub = [...scrub, ...(secret?.scrub ?? [])];
      const cacheDir = await isolation.cacheDir(identity);
      start.mayOutliveCallers = mayDownloadAtStart(record.command) && (await isColdCache(cacheDir));
      signal.throwIfAborted();
      const plan = planSpawn({
        command: record.command,
        args: record.args,
        env: record.env,
        runnerEnv: this.options.runnerEnv,
        home,
        ...(cacheDir ? { cacheDir } : {}),
        ...(secret ? { secretFile: secret.path } : {}),
        ...(worktreeRoot ? { worktreeRoot } : {}),
      });
      const replies = new ReplyBudget(this.options.childReplyBudgetBytes ?? DEFAULT_CHILD_REPLY_BUDGET_BYTES);
      const transport = new ChildTransport({
        ...plan,
        replies,
        cwd: worktreeRoot ?? home,
        ...(identity ?? {}),
        ...(this.options.maxMessageBytes ? { maxMessageBytes: this.options.maxMessageBytes } : {}),
        limits: {
          values: resolveLimits(record.limits, this.options.childLimits ?? DEFAULT_CHILD_LIMITS),
          watch: this.limitWatch,
        },
      });
      start.transport = transport;
      // Declared so a child may ask for input during a call; the bridge routes it to a caller.
      const client = new Client(CLIENT_INFO, {
        capabilities: CHILD_SESSION_CAPABILITIES,
        jsonSchemaValidator,
      });
      const { parkMs, gateWaitMs } = this.options;
      const bridge = new ChildBridge(client, {
        ...(parkMs ? { parkMs } : {}),
        ...(gateWaitMs ? { gateWaitMs } : {}),
        replies,
      });
      const instance: Instance = {
        key,
        serverId,
        threadId,
        caller,
        client,
        transport,
        bridge,
        generation,
        startedAt: Date.now(),
        lastUsed: Date.now(),
        busy: 0,
        identity,
        home,
        worktree,
        ended: Promise.resolve(),
      };
      const scrubbed = [...scrub];
      instance.ended = transport.whenExited().then(() => this.onExit(instance, scrubbed));
      this.children.add(instance);
      handedOver = true;
      this.relayListChanges(instance);
      try {
        await client.connect(transport, { timeout: this.options.startTimeoutMs ?? 60_000, signal });
      } catch (error) {
        if (signal.aborted) {
          // Abandoned (its callers gone, or the runner stopping): an expected end, not a death.
          this.stopping.add(instance);
          this.options.logger.info("child start abandoned", {
            serverId,
            threadId,
            pid: transport.pid,
            why: (signal.reason as Error)?.message,
          });
        }
        await transport.close(500);
        await instance.ended;
        // Scrubbed, then cut: a cut first could split a secret and leave its end in clear.
        const tail = scrubSecrets(transport.stderrTail.trim(), scrub).slice(-1_000);
        const detail = startFailureDetail(record.command, error, tail);
        // A 502 with the (scrubbed) reason, so the probe or call that asked records why.
        throw new AppError("upstream.error", scrubSecrets(detail, scrub), {}, { cause: error });
      }
      this.options.logger.info("child started", {
        serverId,
        threadId,
        ...(caller ? { caller } : {}),
        pid: transport.pid,
        uid: identity?.uid,
      });
      return instance;
    } catch (error) {
      if (!handedOver) {
        if (home) await rm(home, { recursive: true, force: true });
        if (worktree) await this.options.worktrees.close(worktree);
        await isolation.release(identity);
      }
      if (error instanceof AppError) throw error;
      throw new AppError(
        "upstream.error",
        scrubSecrets(`the child did not start: ${(error as Error).message}`, scrub),
        {},
        { cause: error },
      );
    }
  }

  private async worktreeOf(
    record: ServerRecord & { transport: "stdio" },
    threadId: string | undefined,
    home: string,
  ) {
    if (!threadId) return record.scope === "thread" ? home : undefined;
    const registration = await this.options.store.threads.get(threadId, record.id);
    if (!registration) {
      throw new AppError(
        "request.not_found",
        `Thread '${threadId}' has no instance of server '${record.name}'; start it first.`,
      );
    }
    return registration.worktreeRoot;
  }

  private async writeSecretFile(
    record: ServerRecord & { transport: "stdio" },
    home: string,
    identity: ChildIdentity | undefined,
  ): Promise<{ path: string; scrub: string[] } | undefined> {
    if (!record.secretRef) return undefined;
    const values = await this.options.store.secrets.get(record.secretRef).catch((error: unknown) => {
      if (!(error instanceof SealError)) throw error;
      throw new AppError(
        "upstream.error",
        `secret '${record.secretRef}': ${UNREADABLE_SECRETS}`,
        {},
        { cause: error },
      );
    });
    if (!values) throw new AppError("secret.not_found", `Secret '${record.secretRef}' does not exist.`);
    const format = record.secretFormat ?? "env";
    const path = join(home, `secret-${randomUUID()}.${format}`);
    const content = renderSecretFile(values, format);
    await writeFile(path, content, { mode: 0o600, flag: "wx" });
    await this.options.isolation.own(path, identity);
    // The values as given and as rendered (escaped, one entry per line), so a child echoing its file is scrubbed.
    const lines = content.split("\n").map((line) => line.trim().replace(/,$/, ""));
    return { path, scrub: [...Object.values(values), ...lines] };
  }

  private async onExit(instance: Instance, scrub: string[]): Promise<void> {
    this.children.delete(instance);
    const wasRunning = this.live.delete(instance);
    this.forget(instance);
    this.releaseUnused(placementKey(instance.serverId, instance.threadId));
    await rm(instance.home, { recursive: true, force: true });
    if (instance.worktree) await this.options.worktrees.close(instance.worktree);
    await this.options.isolation.release(instance.identity);
    await instance.client.close().catch(() => undefined);
    const expected = this.stopping.delete(instance);
    if (expected) return;
    const { transport } = instance;
    const exit = transport.exitStatus;
    const tail = scrubSecrets(transport.stderrTail.trim(), scrub).slice(-1_000);
    const killedBy =
      transport.killedBy ??
      (exit && transport.limits ? limitFromExit(exit, transport.stderrTail, transport.limits) : undefined);
    const error =
      killedBy === "message_too_large"
        ? `the server wrote a message larger than ${describeBytes(transport.maxMessageBytes)} (MAX_UPSTREAM_MESSAGE_BYTES) and was stopped`
        : killedBy && transport.limits
          ? limitMessage(killedBy, transport.limits)
          : `process exited unexpectedly (${exit?.signal ?? `code ${exit?.code}`})${tail ? `\nstderr (last lines):\n${tail}` : ""}`;
    this.options.logger.warn("child died", {
      serverId: instance.serverId,
      threadId: instance.threadId,
      exit,
      ...(killedBy ? { killedBy } : {}),
    });
    // A thread's or one caller's instance respawns on its next use: its death is not the server's.
    if (instance.threadId || instance.caller) return;
    // A child that never finished starting: the probe or call that started it records the failure and
    // owns the retry — recording it here too would start a second retry chain.
    if (!wasRunning) return;
    await this.markFailed(instance, error);
  }

  /** A project instance that died marks its server failed and schedules the 15 s retry (fenced). */
  private async markFailed(instance: Instance, error: string): Promise<void> {
    const { store, logger } = this.options;
    try {
      const at = new Date().toISOString();
      await recordFailure(store, instance.serverId, instance.generation, { at, reason: "failed", error });
    } catch (failure) {
      logger.error("could not record a child's death", {
        serverId: instance.serverId,
        ...errorFields(failure),
      });
    }
  }

  /**
   * Ends the child's process group (SIGTERM, SIGKILL after `graceMs`); resolves once its dir, secret
   * file and uid are released.
   */
  private async stop(instance: Instance, why: string, graceMs?: number): Promise<void> {
    if (!this.stopping.has(instance)) {
      this.stopping.add(instance);
      this.options.logger.info("child stopping", {
        serverId: instance.serverId,
        threadId: instance.threadId,
        why,
      });
    }
    this.forget(instance);
    await instance.transport.close(graceMs);
    await instance.ended;
  }

  /**
   * Ends an older generation's child without cutting its calls: it takes no new ones (it is in no map),
   * and is stopped once idle, or after {@link RETIRE_MAX_MS} (its server's call timeout may have been
   * edited since it was spawned, without a new generation: the cap, not the timeout, bounds it). A
   * delete or disable meanwhile stops it at once (`stopServer` takes it out of `draining`).
   */
  private async retire(instance: Instance): Promise<void> {
    if (this.draining.has(instance) || this.stopping.has(instance)) return;
    this.forget(instance);
    this.draining.add(instance);
    const until = Date.now() + RETIRE_MAX_MS;
    while (!isIdle(instance) && Date.now() < until && !this.closing && !instance.transport.exitStatus) {
      await delay(100, undefined, { ref: false });
      if (!this.draining.has(instance)) return;
    }
    this.draining.delete(instance);
    await this.stop(instance, "its generation no longer serves");
  }

  /**
   * Stops the children of servers that no longer exist — deleted without this runner being told (the
   * table emptied and made again, a stop request lost): one read per server with children. A store
   * that does not answer stops nothing; the next check looks again.
   */
  private async stopGone(): Promise<void> {
    const serverIds = new Set(this.started().map((instance) => instance.serverId));
    await Promise.all(
      [...serverIds].map(async (serverId) => {
        const exists = await this.options.store.servers.getPlain(serverId).then(
          (server) => server !== undefined,
          () => true,
        );
        if (exists) return;
        const stopped = await this.stopServer(serverId);
        if (stopped > 0)
          this.options.logger.warn("stopped the children of a server that no longer exists", {
            serverId,
            stopped,
          });
      }),
    );
  }

  private async reapIdle(): Promise<void> {
    const cutoff = Date.now() - this.idleMs;
    for (const instance of this.started()) {
      if (isIdle(instance) && instance.lastUsed < cutoff) await this.stop(instance, "idle");
    }
    // A child kept aside serves no longer than an older generation may (unused that long: gone).
    for (const [key, kept] of this.retiring) {
      if (isIdle(kept) && kept.lastUsed < Date.now() - SERVING_MAX_AGE_MS) {
        this.retiring.delete(key);
        await this.stop(kept, "its generation no longer serves");
      }
    }
  }

  /**
   * A child's list_changed becomes a probe job for its server (see {@link ProbeRelay}). One that comes
   * before the child answered anything is held until it does: when that first answer is the very list
   * that changed (a probe's `tools/list` after the start), it already shows the change and nothing is
   * relayed; otherwise (a call that changed the list, say) it is.
   */
  private relayListChanges(instance: Instance): void {
    const { bridge } = instance;
    const early = new Set<string>();
    const relay = () => {
      if (this.stopping.has(instance) || instance.transport.exitStatus) return;
      this.relay.changed(instance.serverId, instance.generation);
    };
    bridge.onFirstAnswer((method) => {
      if ([...early].some((list) => list !== method)) relay();
      early.clear();
    });
    for (const [schema, list] of [
      [ToolListChangedNotificationSchema, "tools/list"],
      [ResourceListChangedNotificationSchema, "resources/list"],
      [PromptListChangedNotificationSchema, "prompts/list"],
    ] as const)
      instance.client.setNotificationHandler(schema, () => {
        if (bridge.firstAnswer === undefined) early.add(list);
        else relay();
      });
  }

  /**
   * Reserves a slot for a spawn (release it with `spawning--`). At the cap, the least recently used idle
   * instance makes way (concurrent spawns each wait for their own victim to exit); with none idle, the
   * spawn is refused.
   */
  private async makeRoom(signal: AbortSignal): Promise<void> {
    for (;;) {
      signal.throwIfAborted();
      if (this.live.size + this.spawning < this.maxChildren) {
        this.spawning++;
        return;
      }
      const victim = [...this.live]
        .filter((instance) => isIdle(instance) && !this.stopping.has(instance))
        .sort((a, b) => a.lastUsed - b.lastUsed)[0];
      const leaving = [...this.live].find((instance) => this.stopping.has(instance));
      if (victim) await this.stop(victim, "making room");
      else if (leaving) await leaving.transport.whenExited();
      else
        throw new AppError(
          "server.unavailable",
          `The runner is at its limit of ${this.maxChildren} children.`,
        );
    }
  }
}

/** Who a face request calls as when it names nobody: the worker's probe (a `per_caller` server's own child). */
export const PROBE_CALLER = "probe";

/** An instance's key: the server's, one thread's (`server#thread`) or one caller's (`server@caller`). */
function instanceKey(serverId: string, threadId: string | undefined, caller: string | undefined): string {
  if (threadId) return `${serverId}#${threadId}`;
  return caller ? `${serverId}@${caller}` : serverId;
}

/** The placement key of an instance key (a server id holds neither `#` nor `@`). */
function placementOfInstance(key: string): string {
  return key.includes("#") ? key : (key.split("@")[0] ?? key);
}

/** How `acquire` and `use` are asked. */
export interface AcquireOptions {
  /** Who calls (`user:<sub>`, `key:<id>`, `admin`, `probe`): a `per_caller` server's child is theirs. */
  caller?: string;
  /** Read the config now instead of from the short cache. */
  fresh?: boolean;
  /** Aborts when the request that asked has gone. */
  signal?: AbortSignal;
  /**
   * The generation the caller was told serves: an older one, while a newer one connects, is served by
   * the child it already has (kept aside while the newer one starts); any other means the current one.
   */
  generation?: number;
  /**
   * The caller asks again after another runner refused the instance (it was full): this runner, in its
   * turn, takes it even when full (it makes room, or answers its cap) — a request is refused for
   * fullness once at most.
   */
  followed?: boolean;
}

/** Nothing of the child is in use: no request served, no call in flight or waiting for input. */
function isIdle(instance: Instance): boolean {
  return instance.busy === 0 && instance.bridge.idle;
}

/** No package cache kept between starts, or an empty one: a package runner would download. */
async function isColdCache(cacheDir: string | undefined): Promise<boolean> {
  if (!cacheDir) return true;
  return (await readdir(cacheDir).catch(() => [])).length === 0;
}
