import type { LatencyPoint, PlainServer, StoredStatus } from "@mcpgw/core";
import type { ApiKeyInfo } from "../keys";
import type { SealedValue } from "../sealing";
import type { SecretSummary } from "../secrets";
import type { Catalog } from "../statuses";
import type { ThreadInstance } from "../threads";

/** A server as kept: its plain fields, the masks of its secret map and the sealed map itself. */
export interface MemoryServer {
  plain: Omit<PlainServer, "masked" | "sealIntact">;
  masked: Record<string, string>;
  sealed: SealedValue | undefined;
  /** The sealed `auth.clientSecret` (the plain `auth` shows its mask). */
  sealedAuth?: SealedValue | undefined;
}

/** A thread as kept: its owner record and its instances by server id. */
export interface MemoryThread {
  owner: string;
  createdAt: string;
  /** Servers ever registered in it (a deleted server's id lingers, as in the table). */
  serverIds: Set<string>;
  instances: Map<string, ThreadInstance>;
}

/**
 * What the in-memory repositories share, as the DynamoDB ones share one table: a server's removal
 * reaches its status, catalogue, latency history, chat toggles and thread instances.
 */
export interface MemoryTables {
  servers: Map<string, MemoryServer>;
  /** Name claims: name → server id. */
  names: Map<string, string>;
  statuses: Map<string, StoredStatus & { lastJobId?: string }>;
  /** Configs kept for older generations that serve while a newer one connects, by server id. */
  serving: Map<string, { server: MemoryServer; generation: number }>;
  catalogs: Map<string, Catalog & { hash: string }>;
  /** Server id → its latency rings' points by slot (`probe#17`). */
  latency: Map<string, Map<string, LatencyPoint>>;
  /** Chat id → ids of the servers it switched off. */
  chatsOff: Map<string, Set<string>>;
  threads: Map<string, MemoryThread>;
  /** Key hash → key. */
  keys: Map<string, ApiKeyInfo>;
  secrets: Map<string, { summary: SecretSummary; sealed: SealedValue }>;
  /** `<serverId>\0<subject>` → the sealed upstream OAuth credential. */
  upstreamCredentials: Map<
    string,
    {
      serverId: string;
      subject: string;
      expiresAt: string | null;
      updatedAt: string;
      refreshLeaseUntil?: number;
      sealed: SealedValue;
    }
  >;
  /**
   * The change feed, as the table's items carry it: the stamp of each server item's last write, by
   * server id and item (`CONFIG`, `STATUS`, `CATALOG`; a deleted server's `GONE`).
   */
  changed: ChangeStamps;
}

/** Feed stamps by server id, then item. */
export class ChangeStamps extends Map<string, Map<string, number>> {
  private last = 0;

  /** Stamps `item` of server `id` now; stamps strictly increase, so two writes in one ms are two changes. */
  stamp(id: string, item: string): void {
    this.last = Math.max(Date.now(), this.last + 1);
    const items = this.get(id) ?? new Map<string, number>();
    items.set(item, this.last);
    this.set(id, items);
  }

  /** Forgets `item` of server `id` (a deleted item leaves the feed, as a deleted table item does). */
  forget(id: string, item: string): void {
    this.get(id)?.delete(item);
  }

  /** The stamps of server `id`'s items `items`, those it has. */
  of(id: string, ...items: string[]): Record<string, number> {
    const stamps = this.get(id);
    return Object.fromEntries(
      items.flatMap((item) => {
        const at = stamps?.get(item);
        return at === undefined ? [] : [[item, at] as const];
      }),
    );
  }
}

/**
 * A map by server id whose every write stamps its item on the change feed, as the table's items do;
 * removing a server's config leaves its tombstone (`GONE`) there.
 */
class StampedMap<V> extends Map<string, V> {
  constructor(
    private readonly changed: ChangeStamps,
    private readonly item: string,
  ) {
    super();
  }
  override set(id: string, value: V): this {
    this.changed.stamp(id, this.item);
    return super.set(id, value);
  }
  override delete(id: string): boolean {
    this.changed.forget(id, this.item);
    if (this.item === "CONFIG") this.changed.stamp(id, "GONE");
    return super.delete(id);
  }
}

export function createMemoryTables(): MemoryTables {
  const changed = new ChangeStamps();
  return {
    changed,
    servers: new StampedMap(changed, "CONFIG"),
    names: new Map(),
    upstreamCredentials: new Map(),
    statuses: new StampedMap(changed, "STATUS"),
    serving: new Map(),
    catalogs: new StampedMap(changed, "CATALOG"),
    latency: new Map(),
    chatsOff: new Map(),
    threads: new Map(),
    keys: new Map(),
    secrets: new Map(),
  };
}

/**
 * Deletes what a server owns besides its config, name and status: catalogue, latency history, chat
 * toggles, instances.
 */
export function removeOwned(tables: MemoryTables, serverId: string): void {
  tables.catalogs.delete(serverId);
  tables.latency.delete(serverId);
  for (const off of tables.chatsOff.values()) off.delete(serverId);
  for (const thread of tables.threads.values()) thread.instances.delete(serverId);
  for (const [key, item] of tables.upstreamCredentials)
    if (item.serverId === serverId) tables.upstreamCredentials.delete(key);
}

/** A copy of stored data: what a read returns is never the stored object itself (as from a table). */
export const copy = <T>(value: T): T => structuredClone(value);

/** Byte order of names, as the table's index sorts them. */
export function byKey(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
