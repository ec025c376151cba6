import {
  type Catalog,
  type FeedRead,
  type FeedStamps,
  type ListedServer,
  type ServerChange,
  type Store,
  StoreError,
} from "@mcpgw/aws";
import {
  errorFields,
  type Logger,
  type PlainServer,
  qualifyToolName,
  type ServerProfile,
  type StoredStatus,
  servingOlder,
  type ToolInfo,
} from "@mcpgw/core";
import { isMoving } from "@mcpgw/upstream";

/**
 * One server as the data plane sees it: config (no secrets), status, tools by qualified name, and
 * what its last good probe learned of it (revision, capabilities…) — known without opening a session.
 */
export interface DirectoryEntry {
  server: PlainServer;
  status: StoredStatus | undefined;
  /** Qualified name (`<server>__<tool>`, shortened past 64 chars) → the upstream's tool. */
  tools: Map<string, ToolInfo>;
  /**
   * Qualified names of pinned tools whose upstream definition changed and awaits an admin: calls to
   * them are refused (`tool.definition_changed`); lists show the pinned definition.
   */
  drifted?: ReadonlySet<string>;
  /** What the last good probe learned of the server: protocol revision, capabilities. */
  profile?: ServerProfile;
}

/** A consistent picture of every server, taken at `takenAt`. */
export interface Snapshot {
  takenAt: number;
  byName: Map<string, DirectoryEntry>;
  byId: Map<string, DirectoryEntry>;
}

/**
 * How far back each look at the change feed reaches: a write is stamped just before it is sent, and
 * lands (retries included: 3 attempts of at most 5 s) well within this; index lag and writers' clock
 * skew are far shorter.
 */
const FEED_LOOKBACK_MS = 30_000;
/** A full read of every server this often, in the background: heals anything the feed could miss. */
const FULL_READ_MS = 5 * 60_000;
/**
 * A refresh that finds more changed servers than this (or than a tenth of those it knows, when that is
 * more) reads everything instead of each changed server's partition: two index queries (a page per
 * MB) cost less than hundreds of reads — 500 creates at once made the first call wait 21.5 s.
 */
const BULK_CHANGE_MIN = 25;
/** Servers read one by one for calls (not found in the view), at most at once (see `entry`). */
const MAX_DIRECT_READS = 32;
/** How long one direct read of a server serves the calls to it that follow (see `entry`). */
const DIRECT_SPACING_MS = 100;
/**
 * How long, at most, a call waits for the directory: only a call the view cannot serve (a name it does
 * not know, a server it shows unusable, a view too old or invalidated) waits at all, for a read of
 * that server or a refresh; past this it fails as the store's unavailability (503, `Retry-After`).
 * Above what a read takes while the store throttles (the AWS SDK's retries back off for seconds) or a
 * shared emulator stalls (3 s seen in CI): a slow store answers late, only a stuck one is a 503.
 */
export const MISS_WAIT_MS = 10_000;
/**
 * The oldest view a call is answered from without a look at the store: past it (an instance idle for
 * minutes, refreshes stuck on a slow store), a call reads its server directly, so a disable, a delete
 * or a pin's drift is never served from an old view.
 */
export const STALE_CEILING_MS = 10_000;
/**
 * How long a refresh may take before it counts as failed and the next one may start: far past a full
 * read of thousands of servers on a slow store (each AWS request has its own timeout); a refresh
 * that outlives it is stuck.
 */
const REFRESH_DEADLINE_MS = 120_000;
/** How long after its last use the view keeps refreshing on its own (see `Directory.keepFresh`). */
const ACTIVE_MS = 60_000;
/** How often, at most, the data plane gives a table it finds without an epoch one. */
const EPOCH_WRITE_GAP_MS = 10_000;

/**
 * The data plane's cached view of servers, statuses and catalogues, served from memory. A refresh
 * reads the change feed (one query) and re-reads only the servers it names — or, when it names many
 * (a bulk change), everything; with nothing changed, that one query is all. Every five minutes a
 * background refresh reads everything instead. No call waits on a refresh: the view refreshes every
 * `maxAgeMs` in the background while the process serves, and a view that old is served as it is while
 * one refresh at a time runs, so edits, disables and new catalogues reach calls one refresh after they
 * are written (about `maxAgeMs` on a healthy store).
 * A view is served at most {@link STALE_CEILING_MS} old, and not stale at all once a refresh failed;
 * past that, and for what the view cannot serve (a server it does not know or shows unusable), a call
 * reads its one server directly or waits for a refresh — up to {@link MISS_WAIT_MS}, then 503.
 * The same feed query names the table's epoch: a table deleted and made again (another epoch, or none
 * where there was one) drops the whole view at once — the next refresh reads everything.
 */
export class Directory {
  private current: Snapshot | undefined;
  private refreshing: Promise<Snapshot> | undefined;
  private refreshStartedAt = 0;
  /** When a call last used the view, and the timer that refreshes it meanwhile (see `keepFresh`). */
  private lastUsedAt = 0;
  private ticker: NodeJS.Timeout | undefined;
  /** True while the last refresh failed: the store is unavailable, and a stale view is not served. */
  private failing = false;
  private lastForcedAt = 0;
  private invalidatedAt = 0;
  /** Where the next look at the change feed starts, and when everything was last read. */
  private feedFrom = 0;
  private fullReadAt = 0;
  /** The table's epoch as last seen on the feed: undefined before the first look, null for none. */
  private epoch: string | null | undefined;
  private epochWrittenAt = Number.NEGATIVE_INFINITY;
  /**
   * The feed's entries already read (see `writeKey`), so its lookback re-reads nothing twice. Stamps
   * are writers' clocks: they name a write, they do not order writes of different writers.
   */
  private readonly applied = new Map<string, number>();
  private readonly chats = new Map<string, { at: number; off: Promise<Set<string>> }>();
  /** Servers read one by one for calls, by name: the last read of each, and when it started. */
  private readonly direct = new Map<string, { at: number; entry: Promise<DirectoryEntry | undefined> }>();
  private directReads = 0;
  /** Servers whose damaged catalogue this process asked to have listed again, with the generation asked. */
  private readonly relisting = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    readonly maxAgeMs = 1_000,
    private readonly onRefresh?: (snapshot: Snapshot) => void,
    private readonly missWaitMs = MISS_WAIT_MS,
  ) {}

  /**
   * The snapshot: the view as it is while it may be served ({@link servable}), a refresh started in
   * the background once it is `maxAgeMs` old. The first one (there is no view yet), one this process
   * invalidated and one past {@link STALE_CEILING_MS} wait for a refresh; a stale one while the store
   * fails waits up to {@link MISS_WAIT_MS}, then fails as the store's unavailability (503).
   */
  async snapshot(): Promise<Snapshot> {
    this.keepFresh();
    const current = this.current;
    if (!current) return this.refresh(false);
    // The store fails: a 503 within the bound. Else a view invalidated by this process (it changed
    // something itself) or past the ceiling (rare while the process serves) waits for its refresh.
    if (this.failing && this.stale(current)) return this.within(this.refresh(false));
    // Invalidated: a refresh begun before that (it may not see what this process saw) will not do.
    if (current.takenAt <= this.invalidatedAt) return this.refreshedAfter(this.invalidatedAt, 0);
    if (!this.servable(current)) return this.refresh(false);
    this.refreshIfStale(current);
    return current;
  }

  /**
   * Keeps the view fresh on its own while this process serves: a refresh every `maxAgeMs` until
   * {@link ACTIVE_MS} after the last use, so an edit reaches the next call one refresh after it is
   * written even after a pause between calls. An idle process reads nothing; a frozen one (a Lambda
   * between invocations) refreshes as its next call finds the view.
   */
  private keepFresh(): void {
    this.lastUsedAt = Date.now();
    if (this.ticker || this.maxAgeMs <= 0) return;
    this.ticker = setInterval(() => {
      if (Date.now() - this.lastUsedAt > ACTIVE_MS) {
        clearInterval(this.ticker);
        this.ticker = undefined;
      } else if (this.current) {
        this.refreshIfStale(this.current);
      }
    }, this.maxAgeMs);
    this.ticker.unref();
  }

  /** Starts a background refresh once `view` is `maxAgeMs` old (its failure is logged by `refresh`). */
  private refreshIfStale(view: Snapshot): void {
    if (this.stale(view)) this.refresh(true).catch(() => undefined);
  }

  /** True once `view` is `maxAgeMs` old: due for a refresh. */
  private stale(view: Snapshot): boolean {
    return Date.now() - view.takenAt >= this.maxAgeMs;
  }

  /**
   * Whether `view` may answer a call without a look at the store: not invalidated by this process, not
   * older than {@link STALE_CEILING_MS} (an instance idle for minutes, or a refresh stuck on a slow
   * store, looks again first), and not stale while the store fails.
   */
  private servable(view: Snapshot): boolean {
    return (
      view.takenAt > this.invalidatedAt &&
      Date.now() - view.takenAt < STALE_CEILING_MS &&
      !(this.failing && this.stale(view))
    );
  }

  /**
   * A snapshot taken after this call arrived: for a miss (an unknown or not-yet-connected server),
   * which may just be newer than the cached view — once the admin API shows a server connected, a
   * call that follows finds it. Misses share one refresh at a time, at most one per `spacingMs`, so
   * a flood of them costs a bounded number of reads; none waits longer than {@link MISS_WAIT_MS}
   * (then it fails as the store's unavailability: the server may exist).
   */
  async fresh(spacingMs = 100): Promise<Snapshot> {
    const refreshed = this.refreshedAfter(Date.now(), spacingMs);
    return this.current ? this.within(refreshed) : refreshed;
  }

  private async refreshedAfter(arrived: number, spacingMs: number): Promise<Snapshot> {
    for (;;) {
      if (this.current && this.current.takenAt > arrived) return this.current;
      if (this.refreshing && this.refreshStartedAt > arrived) return this.refreshing;
      if (this.refreshing) {
        await this.refreshing.catch(() => undefined);
        continue;
      }
      const wait = this.lastForcedAt + spacingMs - Date.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      this.lastForcedAt = Date.now();
      return this.refresh(false);
    }
  }

  /**
   * `pending`, or — when it takes longer than {@link MISS_WAIT_MS} — a StoreError (503
   * `store.unavailable`, `Retry-After`): a call is never answered from what it had to wait for.
   */
  private within<T>(pending: Promise<T>): Promise<T> {
    return failAfter(pending, this.missWaitMs, `The directory did not answer within ${this.missWaitMs} ms`);
  }

  /**
   * Server `name`'s entry for a call to it: from the view when that may be served ({@link servable})
   * and shows the server `usable` (its tool offered) — a view `maxAgeMs` old refreshes in the
   * background meanwhile. Else (unknown, unusable, a view too old or invalidated) read directly — its
   * name claim, then its partition, consistently — up to {@link MISS_WAIT_MS}, and the view refreshed in
   * the background (the next snapshot waits for a refresh when the read found the server otherwise
   * than the view). So a call never waits on a refresh, however many servers changed (a refresh of
   * every server on a slow store took a minute), and a server created, enabled or connected a moment
   * ago is found. A name is read at most once per {@link DIRECT_SPACING_MS} (calls meanwhile share that
   * read), and at most {@link MAX_DIRECT_READS} at once; past that, a call waits for a refresh (bounded
   * the same way).
   */
  async entry(name: string, usable: (entry: DirectoryEntry) => boolean): Promise<DirectoryEntry | undefined> {
    this.keepFresh();
    const current = this.current;
    const known = current?.byName.get(name);
    if (current && known && usable(known) && this.servable(current)) {
      this.refreshIfStale(current);
      return known;
    }
    if (this.directReads >= MAX_DIRECT_READS) return (await this.fresh()).byName.get(name);
    const found = await this.within(this.readOne(name));
    const viewed = this.current?.byName.get(name);
    if (Boolean(found && usable(found)) !== Boolean(viewed && usable(viewed))) this.invalidate();
    this.refresh(true).catch(() => undefined);
    return found;
  }

  /** One server's entry read directly: its name claim, then its partition (shared per name, see `entry`). */
  private readOne(name: string): Promise<DirectoryEntry | undefined> {
    const last = this.direct.get(name);
    if (last && Date.now() - last.at < DIRECT_SPACING_MS) return last.entry;
    if (this.direct.size > 10_000) this.direct.clear();
    this.directReads++;
    const entry = (async () => {
      // By name only: an id in a tool's name finds nothing, as in the snapshot.
      const found = await this.store.servers.resolvePlain(name);
      const server = found?.name === name ? found : undefined;
      const [state] = server ? await this.store.changes.read([server.id]) : [];
      return state?.server ? this.entryOf(state.server, state.status, state.catalog) : undefined;
    })().finally(() => this.directReads--);
    this.direct.set(name, { at: Date.now(), entry });
    entry.catch(() => this.direct.delete(name));
    return entry;
  }

  /**
   * Server `name`'s entry from the snapshot, or — when the snapshot does not know it (it may be newer
   * than the view) — from a view taken after this call ({@link fresh}).
   */
  async named(name: string): Promise<DirectoryEntry | undefined> {
    return (await this.snapshot()).byName.get(name) ?? (await this.fresh()).byName.get(name);
  }

  /** Server `id`'s entry in the view as it is now (no read: as stale as the view), if known. */
  cached(id: string): DirectoryEntry | undefined {
    return this.current?.byId.get(id);
  }

  /** Server `name`'s entry in the view as it is now (no read: as stale as the view), if known. */
  cachedNamed(name: string): DirectoryEntry | undefined {
    return this.current?.byName.get(name);
  }

  /** Makes the next snapshot a fresh one (after this process changed something itself). */
  invalidate(): void {
    this.invalidatedAt = Date.now();
  }

  /** Ids of the servers a chat switched off, cached like the snapshot. */
  chatOff(chatId: string): Promise<Set<string>> {
    const cached = this.chats.get(chatId);
    if (cached && Date.now() - cached.at < this.maxAgeMs) return cached.off;
    if (this.chats.size > 10_000) this.chats.clear();
    const off = this.store.chats.offServers(chatId);
    this.chats.set(chatId, { at: Date.now(), off });
    off.catch(() => this.chats.delete(chatId));
    return off;
  }

  /** Forgets a chat's cached toggles (after this process changed them). */
  forgetChat(chatId: string): void {
    this.chats.delete(chatId);
  }

  /**
   * One refresh at a time. A background one may read everything (when a full read is due); one a
   * call waits on reads the change feed only, unless there is nothing yet to apply changes to.
   */
  private refresh(background: boolean): Promise<Snapshot> {
    if (!this.refreshing) {
      this.refreshStartedAt = Date.now();
      const full = !this.current || (background && Date.now() - this.fullReadAt >= FULL_READ_MS);
      const refreshing = failAfter(
        full ? this.readAll() : this.readChanges(this.current as Snapshot),
        REFRESH_DEADLINE_MS,
        `A directory refresh took longer than ${REFRESH_DEADLINE_MS} ms`,
      )
        .then(
          (snapshot) => {
            this.failing = false;
            return snapshot;
          },
          (error: unknown) => {
            this.failing = true;
            throw error;
          },
        )
        .finally(() => {
          if (this.refreshing === refreshing) this.refreshing = undefined;
        });
      // Logged once per refresh, whoever waits on it.
      refreshing.catch((error) => this.reportFailure(error));
      this.refreshing = refreshing;
    }
    return this.refreshing;
  }

  private reportFailure(error: unknown): void {
    // A missing table is logged once per interval (the store's outage log), not once a second.
    if (!this.store.outages.report(this.logger, error))
      this.logger.error("directory refresh failed", errorFields(error));
  }

  /**
   * Every server with its status, and every catalogue: two index queries, after a look at the feed.
   * A change the feed shows counts as read (the next look skips it, so one bulk change costs one full
   * read) only where the lists show that very write — its stamp on its item, or, for a delete, no such
   * server. The lists and the feed are separate indexes, each with its own lag, and a stamp is its
   * writer's clock, not when the write landed: anything else is read again by the next look.
   */
  private async readAll(): Promise<Snapshot> {
    const takenAt = Date.now();
    // The epoch this read belongs to, and the changes already landed. Unreadable → the next look decides.
    const feed = await this.store.changes.since(takenAt - FEED_LOOKBACK_MS).catch(() => undefined);
    const [servers, catalogs] = await Promise.all([
      this.store.servers.listAll(),
      this.store.statuses.listCatalogs().catch((error) => {
        // Best effort: without catalogues the servers are still known; calls report tool.not_found.
        if (!this.store.outages.report(this.logger, error))
          this.logger.error("catalogue read failed", errorFields(error));
        return [];
      }),
    ]);
    this.epoch = feed ? (feed.epoch ?? null) : undefined;
    const catalogById = new Map(catalogs.map((catalog) => [catalog.serverId, catalog]));
    const byId = new Map<string, DirectoryEntry>();
    for (const { server, status } of servers)
      byId.set(server.id, this.entryOf(server, status, catalogById.get(server.id)));
    this.fullReadAt = takenAt;
    this.feedFrom = takenAt - FEED_LOOKBACK_MS;
    this.applied.clear();
    const shown = listedStamps(servers, catalogs);
    for (const change of feed?.changes ?? [])
      if (
        change.gone
          ? !byId.has(change.serverId)
          : shown.get(`${change.serverId}\0${change.item}`) === change.at
      )
        this.applied.set(writeKey(change), change.at);
    return this.publish(takenAt, byId);
  }

  /** What changed since the last look, applied to `base`: one feed query, then a read per changed server. */
  private async readChanges(base: Snapshot): Promise<Snapshot> {
    const takenAt = Date.now();
    let feed: FeedRead;
    try {
      feed = await this.store.changes.since(this.feedFrom);
    } catch (error) {
      // The feed cannot be read (its index still building after an upgrade, say): read everything.
      this.logger.warn("change feed unreadable; reading every server", errorFields(error));
      return this.readAll();
    }
    if (this.madeAgain(feed)) return this.readAll();
    const changes = feed.changes.filter((change) => !this.applied.has(writeKey(change)));
    const changed = [...new Set(changes.map((change) => change.serverId))];
    if (changed.length > Math.max(BULK_CHANGE_MIN, base.byId.size / 10)) return this.readAll();
    const byId = changed.length > 0 ? new Map(base.byId) : base.byId;
    for (const state of await this.store.changes.read(changed)) {
      if (state.server) byId.set(state.serverId, this.entryOf(state.server, state.status, state.catalog));
      else byId.delete(state.serverId);
    }
    for (const change of changes) this.applied.set(writeKey(change), change.at);
    this.feedFrom = takenAt - FEED_LOOKBACK_MS;
    for (const [key, at] of this.applied) if (at < this.feedFrom) this.applied.delete(key);
    return this.publish(takenAt, byId, changed.length > 0 ? undefined : base);
  }

  /**
   * True when the feed shows another table than the one last read (its epoch changed or vanished):
   * nothing read from the old one stands. A table with no epoch (deployed before epochs) is given
   * one, at most once per {@link EPOCH_WRITE_GAP_MS}.
   */
  private madeAgain(feed: FeedRead): boolean {
    const epoch = feed.epoch ?? null;
    if (this.epoch !== undefined && epoch !== this.epoch) {
      this.logger.warn("the table was made again (its epoch changed); reading every server", {
        was: this.epoch,
        now: epoch,
      });
      return true;
    }
    this.epoch = epoch;
    if (epoch === null && Date.now() - this.epochWrittenAt >= EPOCH_WRITE_GAP_MS) {
      this.epochWrittenAt = Date.now();
      this.store.changes
        .ensureEpoch()
        .catch((error) => this.logger.warn("could not give the table an epoch", errorFields(error)));
    }
    return false;
  }

  /**
   * A server's entry; a damaged catalogue of a connected server (see `Catalog.damaged`) also asks for
   * a full probe, once per generation, so it is rewritten now — not at the next listing, minutes away.
   */
  private entryOf(
    server: PlainServer,
    status: StoredStatus | undefined,
    catalog: Catalog | undefined,
  ): DirectoryEntry {
    const generation = status?.generation;
    if (catalog?.damaged && status?.state === "connected" && generation !== undefined) {
      if (this.relisting.get(server.id) !== generation) {
        this.relisting.set(server.id, generation);
        if (this.relisting.size > 10_000) this.relisting.clear();
        this.store.jobs.send({ type: "probe", serverId: server.id, generation }).catch((error) => {
          this.relisting.delete(server.id);
          this.logger.warn("could not ask for a damaged catalogue to be listed again", {
            serverId: server.id,
            ...errorFields(error),
          });
        });
        this.logger.warn("damaged catalogue: a probe will list the tools again", { serverId: server.id });
      }
    }
    return toEntry(server, status, catalog);
  }

  /** Makes `byId` the current snapshot (re-using `unchanged`'s maps when nothing changed). */
  private publish(takenAt: number, byId: Map<string, DirectoryEntry>, unchanged?: Snapshot): Snapshot {
    // A refresh past its deadline that answers at last never replaces a newer view.
    if (this.current && this.current.takenAt > takenAt) return this.current;
    const byName =
      unchanged?.byName ?? new Map([...byId.values()].map((entry) => [entry.server.name, entry]));
    const snapshot: Snapshot = { takenAt, byName, byId };
    this.current = snapshot;
    if (!unchanged) this.onRefresh?.(snapshot);
    return snapshot;
  }
}

/**
 * One write as the feed names it: its server, its item and its stamp — items are named alike in every
 * server's partition (`CONFIG`, `STATUS`…), and many servers' writes share a millisecond.
 */
function writeKey(change: ServerChange): string {
  return `${change.serverId}\0${change.item}\0${change.at}`;
}

/** The feed stamp of each item the lists read, by `<serverId>\0<item>`: which writes they show. */
function listedStamps(servers: ListedServer[], catalogs: Catalog[]): Map<string, number> {
  const shown = new Map<string, number>();
  const add = (serverId: string, stamps: FeedStamps | undefined) => {
    for (const [item, at] of Object.entries(stamps ?? {})) shown.set(`${serverId}\0${item}`, at);
  };
  for (const { server, stamps } of servers) add(server.id, stamps);
  for (const { serverId, stamps } of catalogs) add(serverId, stamps);
  return shown;
}

/** One server's directory entry: its tools by qualified name (the first of a clashing pair wins). */
function toEntry(
  server: PlainServer,
  status: StoredStatus | undefined,
  catalog: Catalog | undefined,
): DirectoryEntry {
  const entry: DirectoryEntry = {
    server,
    status,
    tools: new Map(),
    ...(catalog?.profile ? { profile: catalog.profile } : {}),
  };
  for (const tool of catalog?.tools ?? []) {
    const qualified = qualifyToolName(server.name, tool.name);
    if (!entry.tools.has(qualified)) entry.tools.set(qualified, tool);
  }
  const drifted = catalog?.pins?.drifted ?? [];
  if (drifted.length > 0) entry.drifted = new Set(drifted.map((name) => qualifyToolName(server.name, name)));
  return entry;
}

/**
 * True when a server's tools are offered: enabled and connected — or connecting a change while the
 * generation that was connected serves on (see `servingOlder`), or moving from a lost runner of the
 * fleet to another (see `isMoving`): its calls go ahead, and start its instance on the runner that
 * takes it over, instead of waiting for the worker's retry to say it connected.
 */
export function isAvailable(entry: DirectoryEntry): boolean {
  const { status } = entry;
  return (
    entry.server.enabled &&
    (status?.state === "connected" ||
      servingOlder(status) !== undefined ||
      (status !== undefined && isMoving(status)))
  );
}

/**
 * The generation whose connection serves calls: warm sessions are kept per generation, so an edit
 * that reaches nothing upstream (a rename, a timeout) keeps them, and a reconnect replaces them.
 */
export function servingGeneration(entry: DirectoryEntry): number {
  return servingOlder(entry.status) ?? entry.status?.generation ?? 0;
}

/** `pending`, or a StoreError (503 `store.unavailable`) saying `message` once `ms` pass first. */
function failAfter<T>(pending: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreError(message)), ms);
  });
  return Promise.race([pending, late]).finally(() => clearTimeout(timer));
}
