import { connectionRefused } from "./classify-failure";
import type { UpstreamSession } from "./session";

/** A pooled session plus a signal that fires when the session breaks (so callers stop waiting). */
export interface PooledSession {
  session: UpstreamSession;
  /** Aborted when the session is evicted or its transport reports a disconnect. */
  broken: AbortSignal;
  /**
   * Evicts this session after a failure; true for exactly one caller per session, so one failure is
   * reported once however many calls saw it.
   */
  claimFailure(): boolean;
}

interface Entry {
  key: string;
  generation: number;
  opening: Promise<PooledSession>;
  lastUsed: number;
  busy: number;
  failureClaimed: boolean;
  controller: AbortController;
  /** Replaced by a newer generation's session while calls were on it: closed when the last one ends. */
  retired?: boolean;
  /** The session once open. */
  pooled?: PooledSession;
  /** When {@link SessionPool.quiet} last handed the session out to be checked. */
  checkedAt: number;
  /** When a use last ended (a call, a list): `touch` keeps a session warm but proves nothing of it. */
  lastCalled: number;
}

/** A warm session handed out to be checked: its pool key and the session. */
export interface QuietSession {
  serverKey: string;
  pooled: PooledSession;
  /** True while the session is still the server's and nothing has used it since it was handed out. */
  stillQuiet(): boolean;
}

/**
 * Errors a transport reports when the connection under a session is gone — or its change stream (a
 * 2025 session's GET stream) given up on after its retries: a session that would hear nothing more is
 * reopened by the next use rather than kept.
 */
const DISCONNECT =
  /SSE stream disconnected|fetch failed|ECONNRESET|ECONNREFUSED|socket hang up|other side closed|terminated|Maximum reconnection attempts/i;

/** The end of a thread's session keys (`…#<thread id>`, URI-encoded), by which its sessions are released. */
export function threadKeySuffix(threadId: string): string {
  return `#${encodeURIComponent(threadId)}`;
}

/**
 * Warm upstream MCP sessions, one per server, keyed by server id + the generation they serve (the
 * caller's `generation`): initialized once, shared by concurrent callers, evicted on error, on a new
 * generation (a change that reaches the upstream, or a reconnect) and when idle.
 */
export class SessionPool {
  private readonly entries = new Map<string, Entry>();
  private readonly sweepTimer: NodeJS.Timeout;
  /**
   * Told when the connection under a server's session is gone (the transport reported a disconnect, or
   * refused a connection): the session is out of the pool by then, and nothing else may have noticed.
   */
  onDisconnect: ((serverKey: string) => void) | undefined;

  constructor(private readonly idleMs = 5 * 60_000) {
    this.sweepTimer = setInterval(() => this.evictIdle(), Math.min(idleMs, 30_000));
    this.sweepTimer.unref();
  }

  /**
   * Runs `use` with the warm session for (serverId, generation), opening one with `open` when there is
   * none; a session of a newer generation than asked for (the caller's snapshot is older) serves too. A
   * session in use is never reaped as idle.
   */
  async use<T>(
    serverId: string,
    generation: number,
    open: () => Promise<UpstreamSession>,
    use: (pooled: PooledSession) => Promise<T>,
  ): Promise<T> {
    const entry = this.entryFor(serverId, generation, open);
    entry.busy++;
    try {
      return await use(await entry.opening);
    } finally {
      entry.busy--;
      entry.lastUsed = Date.now();
      entry.lastCalled = entry.lastUsed;
      if (entry.retired && entry.busy === 0) close(entry);
    }
  }

  /**
   * Marks the server's session (of `generation` or newer, open or opening) used now, so it does not
   * idle out; false when there is none to mark.
   */
  touch(serverId: string, generation: number): boolean {
    const entry = this.entries.get(serverId);
    if (!entry || entry.generation < generation || entry.controller.signal.aborted) return false;
    entry.lastUsed = Date.now();
    return true;
  }

  /**
   * Evicts idle sessions whose server no longer wants them — deleted, disabled or reconfigured —
   * as `keep(serverKey, generation)` says (sessions in use go once their calls finish).
   */
  retain(keep: (serverKey: string, generation: number) => boolean): void {
    for (const [serverKey, entry] of this.entries) {
      if (entry.busy === 0 && !keep(serverKey, entry.generation)) this.evict(serverKey, entry.key);
    }
  }

  /**
   * Closes every session of thread `threadId` (keyed `<serverId>…#<threadId>`, the id URI-encoded) at
   * once, in use or not: the thread was closed, its instances are gone. Returns how many there were.
   */
  releaseThread(threadId: string): number {
    const suffix = threadKeySuffix(threadId);
    let released = 0;
    for (const serverKey of [...this.entries.keys()]) {
      if (serverKey.endsWith(suffix) && this.evict(serverKey, undefined, new Error("thread closed")))
        released++;
    }
    return released;
  }

  private entryFor(serverId: string, generation: number, open: () => Promise<UpstreamSession>): Entry {
    const key = `${serverId}@${generation}`;
    const existing = this.entries.get(serverId);
    // A newer generation's session serves a caller whose snapshot still names an older one (never swapped back).
    if (existing && existing.generation >= generation && !existing.controller.signal.aborted) return existing;
    // A newer generation replaces the session; calls still on the old one finish there first.
    if (existing && existing.busy > 0 && !existing.controller.signal.aborted) {
      this.entries.delete(serverId);
      existing.retired = true;
    } else if (existing) this.evict(serverId);
    const controller = new AbortController();
    const entry: Entry = {
      key,
      generation,
      lastUsed: Date.now(),
      busy: 0,
      failureClaimed: false,
      controller,
      opening: Promise.resolve() as never,
      checkedAt: Date.now(),
      lastCalled: Date.now(),
    };
    entry.opening = open().then(
      (session) => {
        // Only this entry: a session that replaced it under the same key is not this one's to end (a
        // closed session's late errors — its last requests failing — must not break its successor).
        session.client.onerror = (error) => {
          if (!DISCONNECT.test(String(error?.message ?? error))) return;
          // Retired, it is no longer the server's session, but the calls still on it must not wait on it.
          if (entry.retired) return closeOnce(entry, error);
          if (this.entries.get(serverId) !== entry) return;
          // A refused connection (the server stopped accepting): no new call uses this session, but the
          // calls in flight on connections it already has may still be answered; it ends after them.
          if (connectionRefused(error)) this.retireEntry(serverId, entry);
          else this.evictEntry(serverId, entry, error);
          this.onDisconnect?.(serverId);
        };
        session.client.onclose = () => {
          if (entry.retired) closeOnce(entry, new Error("upstream session closed"));
          else this.evictEntry(serverId, entry, new Error("upstream session closed"));
        };
        const claimFailure = () => {
          this.evictEntry(serverId, entry);
          if (entry.failureClaimed) return false;
          entry.failureClaimed = true;
          return true;
        };
        entry.pooled = { session, broken: controller.signal, claimFailure };
        return entry.pooled;
      },
      (error) => {
        if (this.entries.get(serverId) === entry) this.entries.delete(serverId);
        throw error;
      },
    );
    this.entries.set(serverId, entry);
    return entry;
  }

  /**
   * Drops the server's session (only the one under `key`, when given) and closes it; callers waiting
   * on it see `broken` abort with `reason`. True when this call evicted something.
   */
  evict(serverId: string, key?: string, reason: unknown = new Error("upstream session evicted")): boolean {
    const entry = this.entries.get(serverId);
    if (!entry || (key && entry.key !== key)) return false;
    this.entries.delete(serverId);
    close(entry, reason);
    return true;
  }

  /** Takes `entry` out of use when it is still the server's session; it closes once its calls end. */
  private retireEntry(serverId: string, entry: Entry): void {
    if (this.entries.get(serverId) !== entry) return;
    this.entries.delete(serverId);
    entry.retired = true;
    if (entry.busy === 0) close(entry);
  }

  /** Drops `entry` when it is still the server's session (a newer one is left alone). */
  private evictEntry(serverId: string, entry: Entry, reason?: unknown): void {
    if (this.entries.get(serverId) !== entry) return;
    this.entries.delete(serverId);
    close(entry, reason);
  }

  /**
   * Up to `limit` open sessions of the keys `accept` takes that no call has used for `quietMs` and
   * none checked for as long, the longest unchecked first — each marked checked now. Sessions in use
   * prove themselves; these are the ones a lost server would leave unnoticed (a `touch` keeps a session
   * warm but is no use of it).
   */
  quiet(quietMs: number, limit: number, accept: (serverKey: string) => boolean = () => true): QuietSession[] {
    const cutoff = Date.now() - quietMs;
    const due = [...this.entries]
      .filter(
        ([serverKey, entry]) =>
          entry.pooled !== undefined &&
          entry.busy === 0 &&
          !entry.controller.signal.aborted &&
          entry.lastCalled <= cutoff &&
          entry.checkedAt <= cutoff &&
          accept(serverKey),
      )
      .sort(([, a], [, b]) => a.checkedAt - b.checkedAt)
      .slice(0, limit);
    const now = Date.now();
    return due.map(([serverKey, entry]) => {
      entry.checkedAt = now;
      const calledThen = entry.lastCalled;
      return {
        serverKey,
        pooled: entry.pooled as PooledSession,
        stillQuiet: () =>
          this.entries.get(serverKey) === entry && entry.busy === 0 && entry.lastCalled === calledThen,
      };
    });
  }

  /** Number of live sessions (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Closes every session. */
  close(): void {
    clearInterval(this.sweepTimer);
    for (const serverId of [...this.entries.keys()]) this.evict(serverId);
  }

  private evictIdle(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [serverId, entry] of this.entries) {
      if (entry.busy === 0 && entry.lastUsed < cutoff) this.evict(serverId, entry.key);
    }
  }
}

/** Ends an entry's session: callers waiting on it see `broken` abort with `reason`. */
function close(entry: Entry, reason: unknown = new Error("upstream session evicted")): void {
  entry.controller.abort(reason);
  entry.opening.then(({ session }) => session.close()).catch(() => undefined);
}

/** {@link close}, unless the entry was closed already (its session's close reports back). */
function closeOnce(entry: Entry, reason: unknown): void {
  if (!entry.controller.signal.aborted) close(entry, reason);
}
