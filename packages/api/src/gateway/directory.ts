import type { Store } from "@mcpgw/aws";
import {
  errorFields,
  type Logger,
  type PlainServer,
  qualifyToolName,
  type ServerProfile,
  type StoredStatus,
  type ToolInfo,
} from "@mcpgw/core";

/**
 * One server as the data plane sees it: config (no secrets), status, tools by qualified name, and
 * what its last good probe learned of it (revision, capabilities…) — known without opening a session.
 */
export interface DirectoryEntry {
  server: PlainServer;
  status: StoredStatus | undefined;
  /** Qualified name (`<server>__<tool>`, shortened past 64 chars) → the upstream's tool. */
  tools: Map<string, ToolInfo>;
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
 * The data plane's cached view of servers, statuses and catalogues: three index queries per refresh,
 * at most one refresh in flight, served from memory (see `snapshot` for the bound: 2 × `maxAgeMs`,
 * the documented ≤ 2 s staleness of edits, disables and new catalogues).
 */
export class Directory {
  private current: Snapshot | undefined;
  private refreshing: Promise<Snapshot> | undefined;
  private refreshStartedAt = 0;
  private lastForcedAt = 0;
  private readonly chats = new Map<string, { at: number; off: Promise<Set<string>> }>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    readonly maxAgeMs = 1_000,
    private readonly onRefresh?: (snapshot: Snapshot) => void,
  ) {}

  /**
   * The snapshot. Younger than `maxAgeMs`: as it is. Up to twice that: as it is, while a refresh runs
   * in the background (no call waits on the index queries under steady traffic). Older: refreshed
   * first. So what a call sees is never more than 2 × `maxAgeMs` old.
   */
  async snapshot(): Promise<Snapshot> {
    const age = this.current ? Date.now() - this.current.takenAt : Number.POSITIVE_INFINITY;
    if (this.current && age < this.maxAgeMs) return this.current;
    if (this.current && age < 2 * this.maxAgeMs) {
      this.refresh().catch((error) => {
        // A missing table is logged once per interval (the store's outage log), not once a second.
        if (!this.store.outages.report(this.logger, error))
          this.logger.error("directory refresh failed", errorFields(error));
      });
      return this.current;
    }
    return this.refresh();
  }

  /**
   * A snapshot taken after this call arrived: for a miss (an unknown or not-yet-connected server),
   * which may just be newer than the cached view — once the admin API shows a server connected, a
   * call that follows finds it. Misses share one refresh at a time, at most one per `spacingMs`, so
   * a flood of them costs a bounded number of reads.
   */
  async fresh(spacingMs = 100): Promise<Snapshot> {
    const arrived = Date.now();
    for (;;) {
      if (this.current && this.current.takenAt >= arrived) return this.current;
      if (this.refreshing && this.refreshStartedAt >= arrived) return this.refreshing;
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
      return this.refresh();
    }
  }

  /** Forgets the cached snapshot (after this process changed something itself). */
  invalidate(): void {
    this.current = undefined;
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

  private refresh(): Promise<Snapshot> {
    if (!this.refreshing) {
      this.refreshStartedAt = Date.now();
      this.refreshing = this.load().finally(() => {
        this.refreshing = undefined;
      });
    }
    return this.refreshing;
  }

  private async load(): Promise<Snapshot> {
    const takenAt = Date.now();
    const [servers, catalogs] = await Promise.all([
      this.store.servers.listAll(),
      this.store.statuses.listCatalogs().catch((error) => {
        // Best effort: without catalogues the servers are still known; calls report tool.not_found.
        if (!this.store.outages.report(this.logger, error))
          this.logger.error("catalogue read failed", errorFields(error));
        return [];
      }),
    ]);
    const catalogById = new Map(catalogs.map((catalog) => [catalog.serverId, catalog]));
    const snapshot: Snapshot = { takenAt, byName: new Map(), byId: new Map() };
    for (const { server, status } of servers) {
      const catalog = catalogById.get(server.id);
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
      snapshot.byName.set(server.name, entry);
      snapshot.byId.set(server.id, entry);
    }
    this.current = snapshot;
    this.onRefresh?.(snapshot);
    return snapshot;
  }
}

/** True when a server's tools are offered: enabled and connected. */
export function isAvailable(entry: DirectoryEntry): boolean {
  return entry.server.enabled && entry.status?.state === "connected";
}
