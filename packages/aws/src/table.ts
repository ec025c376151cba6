import type { LatencyKind } from "@mcpgw/core";

/** The single table's key schema, shared by the repositories and the bootstrap. */
export const TABLE_KEYS = {
  partition: "pk",
  sort: "sk",
  /** Index listing items of one kind (servers by name, statuses, catalogues, secrets, keys, threads). */
  byKindIndex: "byKind",
  kind: "kind",
  kindSort: "kindSort",
  /** Epoch seconds after which DynamoDB may expire an item. */
  ttl: "expiresAt",
  /** Index of the servers' change feed: what was written when (see `changeStamp`), keys only. */
  byChangeIndex: "byChange",
  changeFeed: "changeFeed",
  /** When the item was last written: epoch ms, fixed width (string order is time order). */
  changedAt: "changedAt",
} as const;

/** Partition and sort keys of every item the system stores. */
export const keys = {
  serverConfig: (id: string) => ({ pk: `SERVER#${id}`, sk: "CONFIG" }),
  serverStatus: (id: string) => ({ pk: `SERVER#${id}`, sk: "STATUS" }),
  serverCatalog: (id: string) => ({ pk: `SERVER#${id}`, sk: "CATALOG" }),
  /** Parts 1… of a catalogue too large for one item (part 0 is the `CATALOG` item itself). */
  serverCatalogPart: (id: string, part: number) => ({ pk: `SERVER#${id}`, sk: `CATALOG#${part}` }),
  serverPartition: (id: string) => `SERVER#${id}`,
  /** The config kept for an older generation that serves while a newer one connects. */
  serverServing: (id: string) => ({ pk: `SERVER#${id}`, sk: "SERVING" }),
  /** What a deleted server leaves on the change feed for a day. */
  serverTombstone: (id: string) => ({ pk: `SERVER#${id}`, sk: "GONE" }),
  /**
   * A server's latency history, one ring per kind (`probe`, `calls`): outside the server's partition,
   * so reading its state never reads its history; deleting the server deletes both by key.
   */
  serverLatency: (id: string, kind: LatencyKind) => ({ pk: `LATENCY#${id}`, sk: kind }),
  nameClaim: (name: string) => ({ pk: `NAME#${name}`, sk: "NAME" }),
  secret: (name: string) => ({ pk: `SECRET#${name}`, sk: "SECRET" }),
  /**
   * The table's epoch: written once when the table is made (or by the first writer that finds none),
   * so a table deleted and made again is told from the old one (see {@link epochItem}).
   */
  tableEpoch: { pk: "TABLE", sk: "EPOCH" },
  /** The health sweep's last run: one at a time (see sweep-runs.ts). */
  sweepRun: { pk: "SWEEP", sk: "RUN" },
  /** Never written: the readiness check reads it to learn the table answers (GetItem is granted). */
  readinessProbe: { pk: "READINESS", sk: "PROBE" },
} as const;

/** Values of the `kind` attribute the byKind index partitions on. */
export const KINDS = {
  server: "SERVER",
  status: "STATUS",
  catalog: "CATALOG",
  secret: "SECRET",
  apiKey: "APIKEY",
  /** A thread's ownership record (`kindSort` `<owner>#<threadId>`). */
  thread: "THREAD",
  /** Who may reach which servers through OAuth (`kindSort` the subject, `user:<name>`/`group:<name>`). */
  access: "ACCESS",
  /** A tool set (`kindSort` its name). */
  toolset: "TOOLSET",
} as const;

/** The one partition of the change feed's index (its sort key, the stamp, orders it). */
export const FEED = "SERVERS";

/** How long a deleted server's tombstone stays on the feed (readers look back far less). */
const TOMBSTONE_SECONDS = 24 * 3600;

/** Epoch ms as a fixed-width string: string order is time order (to the year 2286). */
export function stampOf(at: number): string {
  return String(Math.max(0, Math.floor(at))).padStart(13, "0");
}

/**
 * The attributes that put a server's config, status or catalogue head on the change feed, stamped
 * `at` (default now): every write of one carries them, so readers learn what changed in one query.
 */
export function changeStamp(at = Date.now()): Record<string, string> {
  return { [TABLE_KEYS.changeFeed]: FEED, [TABLE_KEYS.changedAt]: stampOf(at) };
}

/** The tombstone a deleted server leaves on the change feed (expired by TTL a day later). */
export function tombstoneItem(serverId: string, at = Date.now()): Record<string, unknown> {
  return {
    ...keys.serverTombstone(serverId),
    ...changeStamp(at),
    [TABLE_KEYS.ttl]: Math.floor(at / 1000) + TOMBSTONE_SECONDS,
  };
}

/**
 * What an epoch's stamp starts with: it sorts after every time stamp (digits), so every look at the
 * change feed (`changedAt >= since`) also returns the epoch item, and its stamp names the epoch — the
 * feed's index holds keys only.
 */
export const EPOCH_STAMP_PREFIX = "epoch:";

/** The table's epoch item, on the change feed with a stamp no time reaches (see {@link EPOCH_STAMP_PREFIX}). */
export function epochItem(epoch: string): Record<string, unknown> {
  return {
    ...keys.tableEpoch,
    [TABLE_KEYS.changeFeed]: FEED,
    [TABLE_KEYS.changedAt]: `${EPOCH_STAMP_PREFIX}${epoch}`,
  };
}

/** Expression attribute names that stamp an updated item (`SET #feed = :feed, #at = :at`). */
export const STAMP_NAMES = { "#feed": TABLE_KEYS.changeFeed, "#at": TABLE_KEYS.changedAt };

/** The expression attribute values of a stamp taken now (with {@link STAMP_NAMES}). */
export function stampValues(): Record<string, string> {
  return { ":feed": FEED, ":at": stampOf(Date.now()) };
}

/**
 * Which writes a read saw: the change-feed stamp of each item it read, by item (as
 * {@link ServerChange.item} names it). A write is in what a read returned exactly when the read shows
 * that write's stamp on its item — whatever the writers' clocks, and however far the indexes lag.
 */
export type FeedStamps = Readonly<Record<string, number>>;

/** The feed stamps `items` carry (those of a server's config, status or catalogue head). */
export function feedStampsOf(items: ReadonlyArray<Record<string, unknown> | undefined>): FeedStamps {
  const stamps: Record<string, number> = {};
  for (const item of items) {
    const stamp = item?.[TABLE_KEYS.changedAt];
    if (item && typeof stamp === "string" && /^\d+$/.test(stamp)) stamps[String(item.sk)] = Number(stamp);
  }
  return stamps;
}
