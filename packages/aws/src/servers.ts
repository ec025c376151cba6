import { createHash, randomUUID } from "node:crypto";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  AppError,
  initialStatus,
  maskMap,
  type PlainServer,
  readStoredStatus,
  type SecretMap,
  type ServerRecord,
  type ServerSpec,
  type ServerState,
  type StoredStatus,
  salvagedServer,
  secretMapOf,
  storedConfigProblems,
  upstreamAuthOf,
} from "@mcpgw/core";
import { openAuth, type SealedAuth, sealAuth, sealAuthKeeping } from "./auth-secret";
import {
  batchGet,
  conditionalWrite,
  deleteAll,
  failedConditions,
  queryAll,
  queryKind,
  storeFailure,
} from "./dynamo";
import { type SealedValue, type Sealer, serverFieldContext } from "./sealing";
import {
  decodeListCursor,
  encodeListCursor,
  type ListPair,
  MAX_LIST_LIMIT,
  pairListItems,
  positionOf,
  startKeyOf,
  statusListSort,
} from "./server-list";
import { statusItem } from "./statuses";
import {
  changeStamp,
  type FeedStamps,
  feedStampsOf,
  KINDS,
  keys,
  STAMP_NAMES,
  stampValues,
  TABLE_KEYS,
  tombstoneItem,
} from "./table";

type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** A server as read once: the plain view now, the record with its secrets on demand. */
export interface StoredServer {
  plain: PlainServer;
  open(): Promise<ServerRecord>;
}

/** What replacing a stored server needs to know of it (no secrets: they are replaced wholesale). */
export type StoredIdentity = Pick<ServerRecord, "id" | "name" | "version" | "createdAt">;

/** A server an edit stored, and its plain view exactly as written (what the edit's answer shows). */
export type UpdatedServer = ServerRecord & { written: PlainServer };

/**
 * How an edit treats the status: `supersede` starts a new generation (a reconnect, or `disabled`);
 * `keep` leaves generation and state as they are (an edit that does not reach the upstream).
 */
export type EditStatus = "supersede" | "keep";

/**
 * What a superseding change does with the generation that serves, decided on the status as it was read
 * (`state` at `generation`): the write is conditional on that status (a status changed meanwhile — a
 * probe settled, another change — fails it as `server.version_conflict`, and the change reads again).
 * `servesOn` from `connected`: that generation goes on serving from the config as stored now (kept beside
 * the status) while the new one connects; from `connecting`: whatever serves already goes on. Not
 * `servesOn`: nothing serves on. Absent (a disable, an auth change): nothing serves on, whatever the status.
 */
export interface ServingHandover {
  state: ServerState;
  generation: number;
  servesOn: boolean;
}

/** Whether a handover keeps the config as stored now for its (connected) generation to serve from. */
export function keepsConfig(
  handover: ServingHandover | undefined,
): handover is ServingHandover & { state: "connected" } {
  return handover?.servesOn === true && handover.state === "connected";
}

/** A config kept as stored for the older generation that serves while a newer one connects. */
export type ServingServer = ServerRecord & { generation: number };

/**
 * A server (no secret opened) and its status. `statusApart`: that status is still stored as before
 * list pages (kind `STATUS`, not beside its config); {@link ServerRepository.placeStatus} moves it.
 */
export interface ListedServer {
  server: PlainServer;
  status: StoredStatus | undefined;
  statusApart?: true;
  /** The feed stamps of the config and status read: which of their writes this listing shows. */
  stamps?: FeedStamps;
}

/** One page of servers by name, and the cursor of the next page (absent on the last). */
export interface ServerPage {
  servers: ListedServer[];
  nextCursor?: string;
}

/** DynamoDB allows at most this many items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

/**
 * Refuses an import one transaction cannot hold (400 `import.invalid_document`): a created server
 * writes 3 items (name claim, config, status), a replaced one 2 (config, status) or 4 when renamed
 * (the name claim moves). Both repositories check it before writing; an import's dry run too.
 */
export function assertImportFits(
  creates: ReadonlyArray<Pick<ServerSpec, "name">>,
  replaces: ReadonlyArray<{ existing: Pick<StoredIdentity, "name">; spec: Pick<ServerSpec, "name"> }>,
): void {
  const items =
    creates.length * 3 +
    replaces.reduce((sum, { existing, spec }) => sum + (spec.name === existing.name ? 2 : 4), 0);
  if (items > MAX_TRANSACTION_ITEMS) {
    throw new AppError(
      "import.invalid_document",
      `Import at most ${Math.floor(MAX_TRANSACTION_ITEMS / 3)} servers at once.`,
    );
  }
}

/**
 * Server configs with unique names, sealed secrets and optimistic concurrency. Every change is one
 * transaction with the status it supersedes: a config and its generation move together or not at all.
 */
export interface ServerRepository {
  /** Creates a server, its name claim and its initial status (generation 1) in one transaction. */
  create(spec: ServerSpec): Promise<ServerRecord>;
  /**
   * Creates `creates` and overwrites `replaces` (superseding their statuses) all in one transaction:
   * everything or nothing.
   */
  importAll(
    creates: ServerSpec[],
    replaces: Array<{ existing: StoredIdentity; spec: ServerSpec }>,
  ): Promise<ServerRecord[]>;
  /** A server with its secrets opened (KMS); throws SealError when they cannot be. */
  get(id: string): Promise<ServerRecord | undefined>;
  /** `get` by name (opens the secrets). */
  getByName(name: string): Promise<ServerRecord | undefined>;
  /** `get` by id, or by name when `idOrName` is not an id (opens the secrets). */
  resolve(idOrName: string): Promise<ServerRecord | undefined>;
  /** A server's config and masked view without opening its secrets (no KMS call). */
  getPlain(id: string): Promise<PlainServer | undefined>;
  /**
   * One read of a server: its plain view, and its secrets opened only if `open` is called (one KMS
   * call; throws SealError when they cannot be).
   */
  read(id: string): Promise<StoredServer | undefined>;
  /**
   * `getPlain` by id, or by name when `idOrName` is not an id: at most two consistent reads. Unlike the
   * other reads, it also finds a config that is unreadable (`unreadable` says why): one can delete it.
   */
  resolvePlain(idOrName: string): Promise<PlainServer | undefined>;
  /** Every server without opening secrets, sorted by name (one index query). */
  listPlain(): Promise<PlainServer[]>;
  /**
   * At most `limit` servers by name after `cursor` (a previous page's `nextCursor`; a bad one is 400
   * `request.invalid`), each with its status: one index query, no KMS call. Statuses kept apart (see
   * {@link ListedServer}) cost one batch read more, until the sweep has placed them.
   */
  listPage(limit: number, cursor?: string): Promise<ServerPage>;
  /** Every server by name with its status: the same index query, every page (unreadable configs left out). */
  listAll(): Promise<ListedServer[]>;
  /**
   * Moves a status stored as before list pages beside its config (named `name`) in the index; false
   * when it is not apart (already placed, or gone). Conditional: a rename meanwhile wins.
   */
  placeStatus(id: string, name: string): Promise<boolean>;
  /**
   * Stores `spec` over `existing` if its version is still `existing.version` and supersedes its status
   * (generation + 1; `connecting`, or `disabled`) in the same transaction; renames move the claim.
   * `keepSealed` keeps the stored sealed value (and its masks) as it is: `spec`'s secret map is then
   * the masked one, never sealed — an edit that leaves secrets alone opens and seals nothing.
   * `status: "keep"` leaves the status's generation and state alone (it is only re-placed and stamped).
   */
  update(
    existing: StoredIdentity,
    spec: ServerSpec,
    options?: { keepSealed?: boolean; status?: EditStatus; serving?: ServingHandover },
  ): Promise<UpdatedServer>;
  /**
   * Supersedes the status of an enabled server whose config is still at `version` (generation + 1,
   * `connecting`): a reconnect can never revive a server disabled or changed meanwhile. `serving` as
   * in {@link ServerRepository.update}.
   */
  reconnect(id: string, version: number, serving?: ServingHandover): Promise<void>;
  /** The config kept for the older generation that serves while a newer one connects (secrets opened). */
  getServing(id: string): Promise<ServingServer | undefined>;
  /**
   * Deletes the server, its name claim and status in one transaction, then all it owns (catalogue,
   * toggles, thread instances, latency history); false when missing. An unreadable config goes too,
   * and any name claim that points at it under the names it is known by.
   */
  remove(id: string): Promise<boolean>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The status update that starts a new generation: earlier attempts' results are fenced off. Given the
 * server's `name` (an edit, maybe a rename), it also places the status beside its config in the index.
 */
function supersedeStatus(
  tableName: string,
  id: string,
  enabled: boolean,
  now: string,
  name?: string,
  serving?: ServingHandover,
): TransactItem {
  const set = [
    "#state = :state, reason = :null, #error = :null, supersededAt = :now, #feed = :feed, #at = :at",
    ...(name === undefined ? [] : ["#kind = :kind, #kindSort = :kindSort"]),
    ...(keepsConfig(serving) ? ["servingGeneration = :served, servingSince = :now"] : []),
  ];
  // Nothing served before (or a disable): nothing serves on.
  const remove = serving?.servesOn ? "" : " REMOVE servingGeneration, servingSince";
  return {
    Update: {
      TableName: tableName,
      Key: keys.serverStatus(id),
      UpdateExpression: `SET ${set.join(", ")} ADD generation :one${remove}`,
      ConditionExpression: serving
        ? "attribute_exists(pk) AND generation = :served AND #state = :was"
        : "attribute_exists(pk)",
      ExpressionAttributeNames: {
        "#state": "state",
        "#error": "error",
        ...STAMP_NAMES,
        ...(name === undefined ? {} : { "#kind": TABLE_KEYS.kind, "#kindSort": TABLE_KEYS.kindSort }),
      },
      ExpressionAttributeValues: {
        ":state": enabled ? "connecting" : "disabled",
        ":null": null,
        ":now": now,
        ":one": 1,
        ...stampValues(),
        ...(name === undefined ? {} : { ":kind": KINDS.server, ":kindSort": statusListSort(name) }),
        ...(serving ? { ":served": serving.generation, ":was": serving.state } : {}),
      },
    },
  };
}

/**
 * Deletes the config kept for an older generation (with its sealed secrets): a superseding change after
 * which nothing serves on (a disable, an auth change, a change to a server that was not serving) leaves
 * no config for a stale view of the data plane to open.
 */
function dropKept(tableName: string, id: string): TransactItem {
  return { Delete: { TableName: tableName, Key: keys.serverServing(id) } };
}

/**
 * The config item as stored now, kept for generation `generation` to serve from (no index keys, no
 * change stamp: it is read only by key). Conditional on the config still being at `version`.
 */
function servingItem(tableName: string, config: Record<string, unknown>, generation: number): TransactItem {
  const { kind: _k, kindSort: _s, changeFeed: _f, changedAt: _a, ...kept } = config;
  return {
    Put: { TableName: tableName, Item: { ...kept, ...keys.serverServing(String(config.id)), generation } },
  };
}

/**
 * The status update of an edit that keeps the generation: the status placed beside its config (named
 * `name`) in the index and stamped, so the data plane reads the edit at once; state and generation stay.
 */
function restampStatus(tableName: string, id: string, name: string): TransactItem {
  return {
    Update: {
      TableName: tableName,
      Key: keys.serverStatus(id),
      UpdateExpression: "SET #feed = :feed, #at = :at, #kind = :kind, #kindSort = :kindSort",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: {
        ...STAMP_NAMES,
        "#kind": TABLE_KEYS.kind,
        "#kindSort": TABLE_KEYS.kindSort,
      },
      ExpressionAttributeValues: {
        ...stampValues(),
        ":kind": KINDS.server,
        ":kindSort": statusListSort(name),
      },
    },
  };
}

/** The item attribute holding a secret map sealed. */
const SEALED_ATTRIBUTE: Record<SecretMap["field"], string> = { headers: "sealedHeaders", env: "sealedEnv" };

export function createServerRepository(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  sealer: Sealer,
): ServerRepository {
  async function toItem(record: ServerRecord): Promise<Record<string, unknown>> {
    const { headers, env, ...plain } = record as ServerRecord & {
      headers?: Record<string, string>;
      env?: Record<string, string>;
    };
    const { field, rule } = secretMapOf(record.transport);
    const secrets = (field === "headers" ? headers : env) ?? {};
    // Seal first: if sealing fails, nothing is written (fail closed).
    const sealed =
      Object.keys(secrets).length > 0
        ? await sealer.seal(secrets, serverFieldContext(record.id, field))
        : undefined;
    const auth = await sealAuth(record, sealer);
    // Stamped once nothing is left to wait for but the write: the feed's lookback covers the write alone.
    return {
      ...keys.serverConfig(record.id),
      kind: KINDS.server,
      kindSort: record.name,
      ...changeStamp(),
      ...plain,
      [SEALED_ATTRIBUTE[field]]: sealed,
      // Shown without opening anything (lists and reads make no KMS call); checked against `sealed`.
      masked: maskMap(secrets, rule),
      ...(sealed ? { sealedDigest: sealDigest(sealed) } : {}),
      ...authItemFields(auth),
    };
  }

  async function fromItem(item: Record<string, unknown>): Promise<ServerRecord> {
    const { masked: _masked, sealIntact: _intact, ...plain } = plainFromItem(item);
    const { field } = secretMapOf(plain.transport);
    const sealed = item[SEALED_ATTRIBUTE[field]] as SealedValue | undefined;
    const secrets = sealed
      ? await sealer.open<Record<string, string>>(sealed, serverFieldContext(plain.id, field))
      : {};
    const stored = upstreamAuthOf(plain);
    if (!stored) return { ...plain, [field]: secrets } as ServerRecord;
    const auth = await openAuth(plain.id, stored, item.sealedAuth as SealedValue | undefined, sealer);
    return { ...plain, [field]: secrets, auth } as ServerRecord;
  }

  async function newServerItems(
    spec: ServerSpec,
    now: string,
  ): Promise<{ record: ServerRecord; items: TransactItem[] }> {
    const record = { ...spec, id: randomUUID(), version: 1, createdAt: now, updatedAt: now } as ServerRecord;
    const item = await toItem(record);
    return {
      record,
      items: [
        {
          Put: {
            TableName: tableName,
            Item: { ...keys.nameClaim(spec.name), serverId: record.id },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        { Put: { TableName: tableName, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
        {
          Put: {
            TableName: tableName,
            Item: statusItem(record.id, spec.name, {
              ...initialStatus(spec.enabled),
              generation: 1,
              supersededAt: now,
            }),
          },
        },
      ],
    };
  }

  /** The stored item with `record`'s plain fields and the current item's sealed value, masks and digest. */
  async function itemKeepingSealed(record: ServerRecord): Promise<Record<string, unknown>> {
    const current = await readConfig(record.id);
    if (current?.version !== record.version - 1) {
      throw new AppError(
        "server.version_conflict",
        "The server changed since it was read; fetch it and retry.",
      );
    }
    const { headers: _h, env: _e, ...plain } = record as ServerRecord & { headers?: unknown; env?: unknown };
    const kept = ["sealedHeaders", "sealedEnv", "masked", "sealedDigest"].filter(
      (name) => current[name] !== undefined,
    );
    const auth = await sealAuthKeeping(record, current.sealedAuth as SealedValue | undefined, sealer);
    return {
      ...keys.serverConfig(record.id),
      kind: KINDS.server,
      kindSort: record.name,
      ...changeStamp(),
      ...plain,
      ...Object.fromEntries(kept.map((name) => [name, current[name]])),
      ...authItemFields(auth),
    };
  }

  /** The config put (version-checked), the name-claim move, and the superseding status update. */
  async function replaceItems(
    existing: StoredIdentity,
    spec: ServerSpec,
    now: string,
    keepSealed = false,
    status: EditStatus = "supersede",
    serving?: ServingHandover,
  ) {
    const record = {
      ...spec,
      id: existing.id,
      version: existing.version + 1,
      createdAt: existing.createdAt,
      updatedAt: now,
    } as ServerRecord;
    const item = keepSealed ? await itemKeepingSealed(record) : await toItem(record);
    const items: TransactItem[] = [
      {
        Put: {
          TableName: tableName,
          Item: item,
          ConditionExpression: "#version = :expected",
          ExpressionAttributeNames: { "#version": "version" },
          ExpressionAttributeValues: { ":expected": existing.version },
        },
      },
    ];
    if (spec.name !== existing.name) {
      items.push(
        {
          Delete: {
            TableName: tableName,
            Key: keys.nameClaim(existing.name),
            ConditionExpression: "serverId = :id",
            ExpressionAttributeValues: { ":id": existing.id },
          },
        },
        {
          Put: {
            TableName: tableName,
            Item: { ...keys.nameClaim(spec.name), serverId: existing.id },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
      );
    }
    items.push(
      status === "keep"
        ? restampStatus(tableName, existing.id, spec.name)
        : supersedeStatus(tableName, existing.id, spec.enabled, now, spec.name, serving),
    );
    if (status === "supersede" && keepsConfig(serving)) {
      const current = await readConfig(existing.id);
      if (current?.version !== existing.version) throw versionConflict();
      items.push(servingItem(tableName, current, serving.generation));
    }
    return { record, items, written: plainFromItem(item) };
  }

  /** Runs a transaction; a failure that is not a lost condition becomes a StoreError (503, retry). */
  async function transact(items: TransactItem[], what: string): Promise<void> {
    try {
      await ddb.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (failedConditions(error).length > 0) throw error;
      throw storeFailure(error, what);
    }
  }

  /** Pairs as listed: statuses kept apart from their configs are read by key, in batches. */
  async function listed(pairs: ListPair[]): Promise<ListedServer[]> {
    const servers = pairs.map(({ config, status }) => ({ server: plainFromItem(config), config, status }));
    const apart = servers.filter((pair) => !pair.status).map((pair) => keys.serverStatus(pair.server.id));
    const found = new Map(
      (await batchGet(ddb, tableName, apart)).map((item) => [String(item.serverId), item]),
    );
    return servers.map(({ server, config, status }) => {
      const item = status ?? found.get(server.id);
      return {
        server,
        status: item && readStoredStatus(item),
        ...(item && item.kind !== KINDS.server ? { statusApart: true as const } : {}),
        stamps: feedStampsOf([config, item]),
      };
    });
  }

  async function readConfig(id: string): Promise<Record<string, unknown> | undefined> {
    const { Item } = await ddb.send(
      new GetCommand({ TableName: tableName, Key: keys.serverConfig(id), ConsistentRead: true }),
    );
    return Item;
  }

  /** A server's plain view, unreadable or not. */
  async function anyPlain(id: string): Promise<PlainServer | undefined> {
    const item = await readConfig(id);
    return item && plainFromItem(item);
  }

  /** Releases the name claims that still point at server `id` under `names` (after it was deleted). */
  async function releaseClaims(id: string, names: string[]): Promise<void> {
    for (const name of new Set(names)) {
      await conditionalWrite(() =>
        ddb.send(
          new DeleteCommand({
            TableName: tableName,
            Key: keys.nameClaim(name),
            ConditionExpression: "serverId = :id",
            ExpressionAttributeValues: { ":id": id },
          }),
        ),
      );
    }
  }

  const repository: ServerRepository = {
    async create(spec) {
      const { record, items } = await newServerItems(spec, new Date().toISOString());
      try {
        await transact(items, "The new server");
      } catch (error) {
        if (failedConditions(error).includes(0)) {
          throw new AppError("server.name_taken", `A server named '${spec.name}' already exists.`, {
            name: spec.name,
          });
        }
        throw error;
      }
      return record;
    },

    async importAll(creates, replaces) {
      assertImportFits(creates, replaces);
      const now = new Date().toISOString();
      const built = await Promise.all([
        ...creates.map((spec) => newServerItems(spec, now)),
        ...replaces.map(({ existing, spec }) => replaceItems(existing, spec, now)),
      ]);
      const items = built.flatMap((entry) => entry.items);
      try {
        await transact(items, "The import");
      } catch (error) {
        if (failedConditions(error).length > 0) {
          throw new AppError(
            "server.version_conflict",
            "Servers changed while importing; nothing was imported. Retry.",
          );
        }
        throw error;
      }
      return built.map((entry) => entry.record).sort((a, b) => compareNames(a.name, b.name));
    },

    async get(id) {
      const item = await readConfig(id);
      return item && !plainFromItem(item).unreadable ? fromItem(item) : undefined;
    },

    async getByName(name) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.nameClaim(name), ConsistentRead: true }),
      );
      return typeof Item?.serverId === "string" ? repository.get(Item.serverId) : undefined;
    },

    async resolve(idOrName) {
      return UUID.test(idOrName) ? repository.get(idOrName.toLowerCase()) : repository.getByName(idOrName);
    },

    async getPlain(id) {
      const server = await anyPlain(id);
      return server?.unreadable ? undefined : server;
    },

    async read(id) {
      const item = await readConfig(id);
      const plain = item && plainFromItem(item);
      return item && plain && !plain.unreadable ? { plain, open: () => fromItem(item) } : undefined;
    },

    async resolvePlain(idOrName) {
      if (UUID.test(idOrName)) return anyPlain(idOrName.toLowerCase());
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.nameClaim(idOrName), ConsistentRead: true }),
      );
      return typeof Item?.serverId === "string" ? anyPlain(Item.serverId) : undefined;
    },

    async listPlain() {
      const items = await queryKind(ddb, tableName, KINDS.server);
      return items
        .filter((item) => item.sk === "CONFIG")
        .map(plainFromItem)
        .filter((server) => !server.unreadable);
    },

    async listPage(limit, cursor) {
      const size = Math.min(Math.max(1, Math.floor(limit)), MAX_LIST_LIMIT);
      const start = cursor === undefined ? undefined : startKeyOf(decodeListCursor(cursor));
      // A config and its status per server, plus the next config: it tells whether a page follows.
      const { Items = [], LastEvaluatedKey } = await ddb.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: TABLE_KEYS.byKindIndex,
          KeyConditionExpression: "#kind = :kind",
          ExpressionAttributeNames: { "#kind": TABLE_KEYS.kind },
          ExpressionAttributeValues: { ":kind": KINDS.server },
          Limit: 2 * size + 1,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      const { pairs, last, more } = pairListItems(Items, size);
      const servers = await listed(pairs);
      return more || (LastEvaluatedKey && last)
        ? { servers, nextCursor: encodeListCursor(positionOf(last as Record<string, unknown>)) }
        : { servers };
    },

    async listAll() {
      const all = await listed(pairListItems(await queryKind(ddb, tableName, KINDS.server), Infinity).pairs);
      return all.filter((entry) => !entry.server.unreadable);
    },

    async placeStatus(id, name) {
      return conditionalWrite(() =>
        ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.serverStatus(id),
            UpdateExpression: "SET #kind = :kind, #kindSort = :kindSort",
            ConditionExpression: "attribute_exists(pk) AND #kind = :apart",
            ExpressionAttributeNames: { "#kind": TABLE_KEYS.kind, "#kindSort": TABLE_KEYS.kindSort },
            ExpressionAttributeValues: {
              ":kind": KINDS.server,
              ":kindSort": statusListSort(name),
              ":apart": KINDS.status,
            },
          }),
        ),
      );
    },

    async update(existing, spec, options = {}) {
      const now = new Date().toISOString();
      const { record, items, written } = await replaceItems(
        existing,
        spec,
        now,
        options.keepSealed,
        options.status,
        options.serving,
      );
      if (options.status !== "keep" && !options.serving?.servesOn)
        items.push(dropKept(tableName, existing.id));
      const renamed = spec.name !== existing.name;
      const statusIndex = renamed ? 3 : 1;
      try {
        await transact(items, "The change");
      } catch (error) {
        const failed = failedConditions(error);
        if (failed.includes(0)) throw versionConflict();
        if (failed.includes(2) && renamed) {
          throw new AppError("server.name_taken", `A server named '${spec.name}' already exists.`, {
            name: spec.name,
          });
        }
        // A status that changed since it was read (the handover was decided on it): read again.
        if (failed.includes(statusIndex) && options.serving) throw versionConflict();
        if (failed.includes(statusIndex)) {
          throw new AppError("server.not_found", `Server '${existing.name}' was deleted meanwhile.`);
        }
        throw error;
      }
      return { ...record, written };
    },

    async reconnect(id, version, serving) {
      const now = new Date().toISOString();
      const items: TransactItem[] = [
        {
          ConditionCheck: {
            TableName: tableName,
            Key: keys.serverConfig(id),
            ConditionExpression: "#version = :version AND enabled = :true",
            ExpressionAttributeNames: { "#version": "version" },
            ExpressionAttributeValues: { ":version": version, ":true": true },
          },
        },
        supersedeStatus(tableName, id, true, now, undefined, serving),
      ];
      if (keepsConfig(serving)) {
        const current = await readConfig(id);
        if (current?.version !== version) throw versionConflict();
        items.push(servingItem(tableName, current, serving.generation));
      } else if (!serving?.servesOn) items.push(dropKept(tableName, id));
      try {
        await transact(items, "The reconnect");
      } catch (error) {
        if (failedConditions(error).length === 0) throw error;
        throw new AppError(
          "server.version_conflict",
          "The server changed (or was disabled) since it was read; fetch it and retry.",
        );
      }
    },

    async getServing(id) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverServing(id), ConsistentRead: true }),
      );
      if (!Item) return undefined;
      const { generation, ...config } = Item;
      return { ...(await fromItem({ ...config, ...keys.serverConfig(id) })), generation: Number(generation) };
    },

    async remove(id) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const existing = await readConfig(id);
        if (!existing) return false;
        const unreadable = plainFromItem(existing).unreadable !== undefined;
        // An unreadable config is deleted as it is (its version may be what is missing); its claims after.
        const config: TransactItem = unreadable
          ? { Delete: { TableName: tableName, Key: keys.serverConfig(id) } }
          : {
              Delete: {
                TableName: tableName,
                Key: keys.serverConfig(id),
                ConditionExpression: "#version = :version",
                ExpressionAttributeNames: { "#version": "version" },
                ExpressionAttributeValues: { ":version": existing.version },
              },
            };
        const claim: TransactItem[] = unreadable
          ? []
          : [
              {
                Delete: {
                  TableName: tableName,
                  Key: keys.nameClaim(String(existing.name)),
                  ConditionExpression: "serverId = :id",
                  ExpressionAttributeValues: { ":id": id },
                },
              },
            ];
        try {
          // One transaction: the config, its name and its status (which fences off in-flight attempts).
          await transact(
            [
              config,
              ...claim,
              { Delete: { TableName: tableName, Key: keys.serverStatus(id) } },
              // Readers of the change feed learn it is gone.
              { Put: { TableName: tableName, Item: tombstoneItem(id) } },
            ],
            "The delete",
          );
        } catch (error) {
          if (failedConditions(error).length === 0) throw error;
          continue; // changed or deleted meanwhile: read again
        }
        if (unreadable) {
          const names = [existing.name, existing.kindSort].filter((name) => typeof name === "string");
          await releaseClaims(id, names as string[]);
        }
        // What else it owns (catalogue, chat toggles, thread registrations, latency history) can no
        // longer be reached.
        const owned = [
          ...(
            await queryAll(ddb, {
              TableName: tableName,
              KeyConditionExpression: "pk = :pk",
              ExpressionAttributeValues: { ":pk": keys.serverPartition(id) },
              ProjectionExpression: "pk, sk",
            })
          ).filter((item) => item.sk !== keys.serverTombstone(id).sk),
          ...(await queryKind(ddb, tableName, ownedKind(id))),
          // Its latency history, by key (outside its partition: no read for it).
          keys.serverLatency(id, "probe"),
          keys.serverLatency(id, "calls"),
        ];
        await deleteAll(ddb, tableName, owned as Array<{ pk: unknown; sk: unknown }>);
        return true;
      }
      throw new AppError("server.version_conflict", "The server kept changing while it was deleted; retry.");
    },
  };
  return repository;
}

function versionConflict(): AppError {
  return new AppError("server.version_conflict", "The server changed since it was read; fetch it and retry.");
}

/** The byKind partition of items a server owns outside its own partition (chat toggles, thread instances). */
export function ownedKind(serverId: string): string {
  return `OWNED#${serverId}`;
}

/** A digest of a sealed value as stored: tampering with it shows without a KMS call. */
function sealDigest(sealed: SealedValue): string {
  return createHash("sha256")
    .update([sealed.v, sealed.key, sealed.iv, sealed.tag, sealed.data].join("."))
    .digest("base64url");
}

/** A config item's `auth` (masked) and its sealed secret with that secret's digest. */
function authItemFields({ auth, sealedAuth }: SealedAuth): Record<string, unknown> {
  return {
    ...(auth ? { auth } : {}),
    ...(sealedAuth ? { sealedAuth, sealedAuthDigest: sealDigest(sealedAuth) } : {}),
  };
}

/** A stored config item as the plain server (secrets stay sealed; masks and seal check included). */
export function plainFromItem(item: Record<string, unknown>): PlainServer {
  const problems = storedConfigProblems(item);
  if (problems.length > 0) return salvagedServer(idOfConfig(item), item, problems);
  const {
    pk: _pk,
    sk: _sk,
    kind: _kind,
    kindSort: _kindSort,
    sealedHeaders,
    sealedEnv,
    sealedDigest,
    sealedAuth,
    sealedAuthDigest,
    masked,
    changeFeed: _feed,
    changedAt: _at,
    ...plain
  } = item;
  const sealed = (sealedHeaders ?? sealedEnv) as SealedValue | undefined;
  const sealIntact =
    (!sealed || sealedDigest === undefined || sealDigest(sealed) === sealedDigest) &&
    (!sealedAuth || sealDigest(sealedAuth as SealedValue) === sealedAuthDigest);
  return {
    ...plain,
    masked: (masked as Record<string, string> | undefined) ?? (sealed ? undefined : {}),
    sealIntact,
  } as PlainServer;
}

/** A config item's server id: its own, else the one its key names. */
function idOfConfig(item: Record<string, unknown>): string {
  return typeof item.id === "string" && item.id.length > 0
    ? item.id
    : String(item.pk).slice(keys.serverPartition("").length);
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
