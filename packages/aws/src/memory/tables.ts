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
  /** Server id → when its config, status or catalogue was last written or removed (the change feed). */
  changed: Map<string, number>;
}

/**
 * A map by server id whose every write stamps the server on the change feed, as the table's items
 * do; stamps here strictly increase, so two writes in one millisecond are still two changes.
 */
class StampedMap<V> extends Map<string, V> {
  constructor(
    private readonly changed: Map<string, number>,
    private readonly clock: { last: number },
  ) {
    super();
  }
  override set(id: string, value: V): this {
    this.stamp(id);
    return super.set(id, value);
  }
  override delete(id: string): boolean {
    this.stamp(id);
    return super.delete(id);
  }
  private stamp(id: string): void {
    this.clock.last = Math.max(Date.now(), this.clock.last + 1);
    this.changed.set(id, this.clock.last);
  }
}

export function createMemoryTables(): MemoryTables {
  const changed = new Map<string, number>();
  const clock = { last: 0 };
  return {
    changed,
    servers: new StampedMap(changed, clock),
    names: new Map(),
    upstreamCredentials: new Map(),
    statuses: new StampedMap(changed, clock),
    serving: new Map(),
    catalogs: new StampedMap(changed, clock),
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
