import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  type AttemptOutcome,
  attemptChanges,
  describeBytes,
  freshGeneration,
  initialStatus,
  listingChanges,
  type Pins,
  readCatalogBody,
  readStoredStatus,
  type ServerProfile,
  type StoredStatus,
  type ToolInfo,
} from "@mcpgw/core";
import { failedConditions, isConditionFailure, putWhileExists, queryAll, queryKind } from "./dynamo";
import { statusListSort } from "./server-list";
import { changeStamp, type FeedStamps, feedStampsOf, KINDS, keys, STAMP_NAMES, stampValues } from "./table";

type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/**
 * The stored item of a server's status, beside its config (named `name`) in the index's `SERVER`
 * partition, so a list page reads both. (Statuses stored before list pages are kind `STATUS`.)
 */
export function statusItem(serverId: string, name: string, status: StoredStatus): Record<string, unknown> {
  return {
    ...keys.serverStatus(serverId),
    kind: KINDS.server,
    kindSort: statusListSort(name),
    serverId,
    ...changeStamp(),
    ...status,
  };
}

/** What a good probe found of its server: its tools and, when its session reported one, its profile. */
export interface Findings {
  tools: ToolInfo[];
  profile?: ServerProfile;
  /** What the catalogue keeps about its pins (drifted tools, rejections, pending changes); see `reconcileTools`. */
  pins?: Pins;
}

/** A server's catalogue: what its last good probe found (tools and profile, stored together), and when. */
export interface Catalog extends Findings {
  serverId: string;
  updatedAt: string;
  /** The stored body's hash (absent on catalogues stored before hashes): a conditional rewrite names it. */
  hash?: string;
  /**
   * The stored body is not the one its hash names, or cannot be read: it holds no tools (`tools` is
   * empty) until a full probe rewrites it — the data plane asks for one when it meets it.
   */
  damaged?: true;
  /** As listed: the feed stamp of the catalogue head read (which of its writes the list shows). */
  stamps?: FeedStamps;
}

/**
 * A catalogue's stored body, as JSON (`{tools, profile}`), and its hash: a write whose hash is the
 * stored one — and the stored body's own — is skipped, so the catalogue is rewritten only when its
 * tools or its profile changed, or what is stored is damaged.
 */
export function catalogBody({ tools, profile, pins }: Findings): { json: string; hash: string } {
  const json = JSON.stringify({ tools, ...(profile ? { profile } : {}), ...(pins ? { pins } : {}) });
  return { json, hash: bodyHash(json) };
}

function bodyHash(json: string): string {
  return createHash("sha256").update(json).digest("base64url");
}

/**
 * A catalogue is stored gzipped, split into parts of at most this many bytes (DynamoDB items hold
 * 400 KB); all parts and the status go in one transaction (4 MB), so the whole is bounded too.
 */
export const CATALOG_PART_BYTES = 300_000;
export const MAX_CATALOG_PARTS = 12;

/** A catalogue too large to store: the probe's outcome becomes a failure that says so. */
export class CatalogTooLargeError extends Error {
  override readonly name = "CatalogTooLargeError";
  constructor(
    readonly toolCount: number,
    readonly gzippedBytes: number,
  ) {
    super(
      `catalogue too large: ${toolCount} tools, ${Math.round(gzippedBytes / 1024)} KB compressed (at most ${describeBytes(CATALOG_PART_BYTES * MAX_CATALOG_PARTS)})`,
    );
  }
}

/**
 * The stored catalogue is no longer the one a conditional write named (another probe, or an admin's
 * decision, rewrote it meanwhile): read it again and decide again.
 */
export class CatalogMovedError extends Error {
  override readonly name = "CatalogMovedError";
  constructor() {
    super("the catalogue changed meanwhile");
  }
}

/** How an attempt's outcome is written besides the outcome itself. */
export interface RecordOptions {
  /** The job that made the attempt: a redelivered job records once. */
  jobId?: string;
  /** A failure's place in its run: failures in a row, and when the retry comes (ISO). */
  backoff?: { failureCount: number; nextAttemptAt: string };
  /** The attempt held its generation's claim: this record ends it. */
  endsClaim?: boolean;
  /**
   * An older generation served while this one connected (the status read had `servingGeneration`): its
   * kept config (sealed secrets) is deleted in the same transaction. Without it, no delete is written —
   * an attempt costs no extra write where nothing was handed over.
   */
  endsServing?: boolean;
  /**
   * The catalogue is written only over the stored one of this hash (null: none, or one without a
   * hash) — else {@link CatalogMovedError}; absent: over whatever is stored.
   */
  catalogHash?: string | null;
}

/** Live status under the generation fence, and the tool catalogue written with it. */
export interface StatusRepository {
  get(serverId: string): Promise<StoredStatus | undefined>;
  /**
   * Every status, by server id (two index queries: beside the configs, and kept apart as before list
   * pages). To list servers with their statuses, `servers.listAll` reads both at once.
   */
  list(): Promise<Map<string, StoredStatus>>;
  /**
   * Supersedes every earlier attempt: generation + 1, state `connecting` or `disabled`, reason and
   * error cleared (only while the generation is still `expected`, when given). Returns the new status;
   * undefined when the server has no status (deleted) or its generation moved on.
   */
  bump(
    serverId: string,
    state: "connecting" | "disabled",
    expected?: number,
  ): Promise<StoredStatus | undefined>;
  /**
   * Writes an attempt's outcome — and on success what it `found` (the catalogue: tools and profile), in
   * the same transaction, when that changed; the profile's protocol revision, when the tools were listed and
   * the profile's digest go in the status — only
   * if the stored generation still equals `generation` and the server is not disabled. The attempt
   * settles its generation: an older one that served meanwhile serves no more (`servingGeneration`,
   * `servingSince` and the config kept for it go, in the same transaction).
   * False when fenced off (stale, disabled or deleted), or when `jobId` already recorded its outcome (a
   * redelivered job: at-least-once delivery made idempotent).
   * @throws CatalogTooLargeError when the tools cannot be stored.
   * @throws CatalogMovedError when `catalogHash` no longer names the stored catalogue.
   */
  recordAttempt(
    serverId: string,
    generation: number,
    outcome: AttemptOutcome,
    found?: Findings,
    options?: RecordOptions,
  ): Promise<boolean>;
  /**
   * Claims the one attempt of `generation` in flight until `until` (ISO; past the attempt's deadline and
   * grace, so a worker that died holds nothing for long): only while that generation is current and no
   * other claim of it is live. False when fenced off or another attempt holds it (its job is dropped).
   * The attempt's record ends it (`endsClaim`); else it lapses at `until`.
   */
  claimAttempt(serverId: string, generation: number, until: string): Promise<boolean>;
  /** Server `serverId`'s catalogue, read consistently. */
  getCatalog(serverId: string): Promise<Catalog | undefined>;
  /**
   * Rewrites a catalogue's tools and pins after an admin's decision (its profile kept as `found`
   * carries it), with the status's `pendingChanges` (and a connected server's `toolCount`): only over
   * the stored catalogue of hash `expected` and while the status exists. False when either moved (read
   * again and decide again).
   */
  repin(serverId: string, found: Findings, expected: string | null): Promise<boolean>;
  /** Every server's catalogue (one index query). */
  listCatalogs(): Promise<Catalog[]>;
  /**
   * Rewrites the status of server `serverId` (named `name`) when it is missing or unreadable, as a new
   * generation ({@link freshGeneration}: above any a fenced writer holds), `connecting` or `disabled`;
   * only while its config exists and the stored item is still the one read. Returns the new status;
   * undefined when the status was fine (or was changed meanwhile, or the server is gone).
   */
  heal(serverId: string, name: string, enabled: boolean): Promise<StoredStatus | undefined>;
}

export function createStatusRepository(ddb: DynamoDBDocumentClient, tableName: string): StatusRepository {
  /** The catalogue's parts to write (and stale ones to delete) — none when its content is unchanged. */
  async function catalogWrites(
    serverId: string,
    found: Findings,
    at: string,
    expected?: string | null,
  ): Promise<TransactItem[]> {
    const { json, hash } = catalogBody(found);
    const { Item: head } = await ddb.send(
      new GetCommand({ TableName: tableName, Key: keys.serverCatalog(serverId), ConsistentRead: true }),
    );
    const storedHash = typeof head?.hash === "string" ? head.hash : null;
    if (expected !== undefined && storedHash !== expected) throw new CatalogMovedError();
    if (head?.hash === hash && (await storedBodyIntact(head, hash))) return [];
    const gzipped = gzipSync(json);
    const count = Math.max(1, Math.ceil(gzipped.length / CATALOG_PART_BYTES));
    if (count > MAX_CATALOG_PARTS) throw new CatalogTooLargeError(found.tools.length, gzipped.length);
    const part = (i: number) => gzipped.subarray(i * CATALOG_PART_BYTES, (i + 1) * CATALOG_PART_BYTES);
    const writes: TransactItem[] = [
      {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.serverCatalog(serverId),
            kind: KINDS.catalog,
            kindSort: serverId,
            serverId,
            ...changeStamp(),
            updatedAt: at,
            hash,
            parts: count,
            tools: part(0),
          },
          ...(expected === undefined
            ? {}
            : expected === null
              ? {
                  ConditionExpression: "attribute_not_exists(#hash)",
                  ExpressionAttributeNames: { "#hash": "hash" },
                }
              : {
                  ConditionExpression: "#hash = :expected",
                  ExpressionAttributeNames: { "#hash": "hash" },
                  ExpressionAttributeValues: { ":expected": expected },
                }),
        },
      },
    ];
    for (let i = 1; i < count; i++) {
      writes.push({
        Put: {
          TableName: tableName,
          Item: {
            ...keys.serverCatalogPart(serverId, i),
            kind: KINDS.catalog,
            kindSort: `${serverId}#${i}`,
            serverId,
            part: i,
            tools: part(i),
          },
        },
      });
    }
    const previous = Number(head?.parts ?? 1);
    for (let i = count; i < previous; i++)
      writes.push({ Delete: { TableName: tableName, Key: keys.serverCatalogPart(serverId, i) } });
    return writes;
  }

  /** Whether the stored catalogue (head and parts) is the body `hash` names: a hash is not trusted alone. */
  async function storedBodyIntact(head: Record<string, unknown>, hash: string): Promise<boolean> {
    const items =
      Number(head.parts ?? 1) <= 1
        ? [head]
        : await queryAll(ddb, {
            TableName: tableName,
            KeyConditionExpression: "pk = :pk AND begins_with(sk, :catalog)",
            ExpressionAttributeValues: {
              ":pk": keys.serverPartition(serverIdOf(head)),
              ":catalog": keys.serverCatalog("").sk,
            },
            ConsistentRead: true,
          });
    const json = catalogJson(items);
    return json !== undefined && bodyHash(json) === hash;
  }

  async function readStatusItem(serverId: string): Promise<Record<string, unknown> | undefined> {
    const { Item } = await ddb.send(
      new GetCommand({ TableName: tableName, Key: keys.serverStatus(serverId), ConsistentRead: true }),
    );
    return Item;
  }

  return {
    async get(serverId) {
      const item = await readStatusItem(serverId);
      return item ? readStoredStatus(item) : undefined;
    },

    async list() {
      const [listed, apart] = await Promise.all([
        queryKind(ddb, tableName, KINDS.server),
        queryKind(ddb, tableName, KINDS.status),
      ]);
      const items = [...apart, ...listed.filter((item) => item.sk === "STATUS")];
      return new Map(
        items.flatMap((item) => {
          const status = readStoredStatus(item);
          return status ? [[String(item.serverId), status] as const] : [];
        }),
      );
    },

    async bump(serverId, state, expected) {
      try {
        const { Attributes } = await ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.serverStatus(serverId),
            UpdateExpression:
              "SET #state = :state, reason = :null, #error = :null, supersededAt = :now, #feed = :feed, #at = :at ADD generation :one",
            ConditionExpression: `attribute_exists(pk)${expected === undefined ? "" : " AND generation = :expected"}`,
            ExpressionAttributeNames: { "#state": "state", "#error": "error", ...STAMP_NAMES },
            ExpressionAttributeValues: {
              ...stampValues(),
              ":state": state,
              ":null": null,
              ":one": 1,
              ":now": new Date().toISOString(),
              ...(expected === undefined ? {} : { ":expected": expected }),
            },
            ReturnValues: "ALL_NEW",
          }),
        );
        return Attributes ? readStoredStatus(Attributes) : undefined;
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    },

    async recordAttempt(serverId, generation, outcome, found, options: RecordOptions = {}) {
      // Read before the stamp is taken: the feed's lookback covers the write alone.
      const catalog =
        outcome.ok && found ? await catalogWrites(serverId, found, outcome.at, options.catalogHash) : [];
      const changes: Record<string, unknown> = {
        ...attemptChanges(outcome, found?.profile),
        ...(outcome.ok && found ? listingChanges(outcome.at, found.profile) : {}),
        ...(outcome.ok && found ? { pendingChanges: found.pins?.changes?.length ?? 0 } : {}),
        ...(options.jobId ? { lastJobId: options.jobId } : {}),
        ...(outcome.ok ? {} : options.backoff),
        ...changeStamp(),
      };
      const names = Object.keys(changes);
      const statusUpdate: TransactItem = {
        Update: {
          TableName: tableName,
          Key: keys.serverStatus(serverId),
          UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(", ")} REMOVE servingGeneration, servingSince${options.endsClaim ? ", attemptUntil" : ""}`,
          ConditionExpression: `attribute_exists(pk) AND generation = :generation AND #state <> :disabled${
            options.jobId ? " AND (attribute_not_exists(lastJobId) OR lastJobId <> :v_job)" : ""
          }`,
          ExpressionAttributeNames: {
            ...Object.fromEntries(names.map((name, i) => [`#f${i}`, name])),
            "#state": "state",
          },
          ExpressionAttributeValues: {
            ...Object.fromEntries(names.map((name, i) => [`:v${i}`, changes[name]])),
            ":generation": generation,
            ":disabled": "disabled",
            ...(options.jobId ? { ":v_job": options.jobId } : {}),
          },
        },
      };
      // Under the status's fence: a newer handover (a newer generation) would have failed the update.
      const servedNoMore: TransactItem[] = options.endsServing
        ? [{ Delete: { TableName: tableName, Key: keys.serverServing(serverId) } }]
        : [];
      try {
        await ddb.send(
          new TransactWriteCommand({ TransactItems: [statusUpdate, ...servedNoMore, ...catalog] }),
        );
        return true;
      } catch (error) {
        const failed = failedConditions(error);
        if (failed.includes(0)) return false;
        if (failed.includes(1 + servedNoMore.length)) throw new CatalogMovedError();
        throw error;
      }
    },

    async repin(serverId, found, expected) {
      const now = new Date().toISOString();
      let catalog: TransactItem[];
      try {
        catalog = await catalogWrites(serverId, found, now, expected);
      } catch (error) {
        if (error instanceof CatalogMovedError) return false;
        throw error;
      }
      // A connected server's tool count follows what it serves; another's stays as its state has it.
      const statusUpdate = (connected: boolean): TransactItem => ({
        Update: {
          TableName: tableName,
          Key: keys.serverStatus(serverId),
          UpdateExpression: `SET pendingChanges = :pending, ${connected ? "toolCount = :count, " : ""}#feed = :feed, #at = :at`,
          ConditionExpression: `attribute_exists(pk)${connected ? " AND #state = :connected" : ""}`,
          ExpressionAttributeNames: { ...STAMP_NAMES, ...(connected ? { "#state": "state" } : {}) },
          ExpressionAttributeValues: {
            ...stampValues(),
            ":pending": found.pins?.changes?.length ?? 0,
            ...(connected ? { ":count": found.tools.length, ":connected": "connected" } : {}),
          },
        },
      });
      for (const connected of [true, false]) {
        try {
          await ddb.send(new TransactWriteCommand({ TransactItems: [statusUpdate(connected), ...catalog] }));
          return true;
        } catch (error) {
          const failed = failedConditions(error);
          if (failed.length === 0) throw error;
          if (!connected || failed.includes(1)) return false;
        }
      }
      return false;
    },

    async claimAttempt(serverId, generation, until) {
      try {
        await ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.serverStatus(serverId),
            // No change stamp: a claim is no news to the data plane.
            UpdateExpression: "SET attemptGeneration = :g, attemptUntil = :until",
            ConditionExpression:
              "attribute_exists(pk) AND generation = :g AND (attribute_not_exists(attemptUntil) OR attemptGeneration <> :g OR attemptUntil < :now)",
            ExpressionAttributeValues: {
              ":g": generation,
              ":until": until,
              ":now": new Date().toISOString(),
            },
          }),
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw error;
      }
    },

    async getCatalog(serverId) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverCatalog(serverId), ConsistentRead: true }),
      );
      if (!Item) return undefined;
      if (Number(Item.parts ?? 1) <= 1) return toCatalog([Item]);
      return toCatalog(
        await queryAll(ddb, {
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :catalog)",
          ExpressionAttributeValues: {
            ":pk": keys.serverPartition(serverId),
            ":catalog": keys.serverCatalog("").sk,
          },
          ConsistentRead: true,
        }),
      );
    },

    async listCatalogs() {
      const items = await queryKind(ddb, tableName, KINDS.catalog);
      const byServer = new Map<string, Record<string, unknown>[]>();
      for (const item of items) {
        const serverId = String(item.serverId);
        byServer.set(serverId, [...(byServer.get(serverId) ?? []), item]);
      }
      return [...byServer.values()].flatMap((parts) => {
        const catalog = toCatalog(parts);
        // Only the head carries a feed stamp.
        return catalog ? [{ ...catalog, stamps: feedStampsOf(parts) }] : [];
      });
    },

    async heal(serverId, name, enabled) {
      const item = await readStatusItem(serverId);
      if (item && readStoredStatus(item)) return undefined;
      const now = new Date().toISOString();
      const status: StoredStatus = {
        ...initialStatus(enabled),
        generation: freshGeneration(item?.generation),
        supersededAt: now,
      };
      // Only over the item read (its generation as it was: a string, a number, or none at all).
      const unchanged =
        item === undefined
          ? { ConditionExpression: "attribute_not_exists(pk)" }
          : item.generation === undefined
            ? { ConditionExpression: "attribute_not_exists(generation)" }
            : {
                ConditionExpression: "generation = :was",
                ExpressionAttributeValues: { ":was": item.generation },
              };
      const made = await putWhileExists(ddb, tableName, keys.serverConfig(serverId), {
        Item: statusItem(serverId, name, status),
        ...unchanged,
      });
      return made === "written" ? status : undefined;
    },
  };
}

function serverIdOf(item: Record<string, unknown>): string {
  return String(item.serverId);
}

/**
 * A catalogue from its head item and parts; undefined while they do not add up (a write under way
 * between two reads of an eventually consistent index: the next read sees it whole).
 */
export function toCatalog(items: Record<string, unknown>[]): Catalog | undefined {
  const head = items.find((item) => item.part === undefined);
  const json = catalogJson(items);
  if (!head) return undefined;
  const intact = json !== undefined && (typeof head.hash !== "string" || bodyHash(json) === head.hash);
  const found = intact ? readCatalogBody(json) : undefined;
  const kept = {
    serverId: String(head.serverId),
    updatedAt: String(head.updatedAt),
    ...(typeof head.hash === "string" ? { hash: head.hash } : {}),
  };
  // A damaged catalogue holds no tools: the server shows none until a full probe rewrites it.
  return found ? { ...kept, ...found } : { ...kept, tools: [], damaged: true };
}

/**
 * The stored JSON of a catalogue's head and parts (ungzipped), or undefined while they do not add up
 * or cannot be read.
 */
function catalogJson(items: Record<string, unknown>[]): string | undefined {
  const head = items.find((item) => item.part === undefined);
  if (!head) return undefined;
  const count = Number(head.parts ?? 1);
  const parts = [
    head,
    ...items.filter((item) => item.part !== undefined).sort((a, b) => Number(a.part) - Number(b.part)),
  ].slice(0, count);
  if (parts.length < count || !Number.isSafeInteger(count)) return undefined;
  try {
    return gunzipSync(Buffer.concat(parts.map((part) => Buffer.from(part.tools as Uint8Array)))).toString(
      "utf8",
    );
  } catch {
    return undefined;
  }
}
