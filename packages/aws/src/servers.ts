import { randomUUID } from "node:crypto";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { AppError, initialStatus, type ServerRecord, type ServerSpec } from "@mcpgw/core";
import { deleteAll, failedConditions, queryAll, queryKind } from "./dynamo";
import { type SealedValue, type Sealer, serverFieldContext } from "./sealing";
import { statusItem } from "./statuses";
import { KINDS, keys } from "./table";

type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

/** What replacing a stored server needs to know of it (no secrets: they are replaced wholesale). */
export type StoredIdentity = Pick<ServerRecord, "id" | "name" | "version" | "createdAt">;

/** DynamoDB allows at most this many items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

/** Server configs with unique names, sealed secrets and optimistic concurrency. */
export interface ServerRepository {
  /** Creates a server, its name claim and its initial status (generation 1) in one transaction. */
  create(spec: ServerSpec): Promise<ServerRecord>;
  /** Creates `creates` and overwrites `replaces` all in one transaction: everything or nothing. */
  importAll(
    creates: ServerSpec[],
    replaces: Array<{ existing: StoredIdentity; spec: ServerSpec }>,
  ): Promise<ServerRecord[]>;
  get(id: string): Promise<ServerRecord | undefined>;
  /** A server's config without opening its secrets (no KMS call). */
  getPlain(id: string): Promise<Omit<ServerRecord, "headers" | "env"> | undefined>;
  getByName(name: string): Promise<ServerRecord | undefined>;
  /** A server by id, or by name when `idOrName` is not an id. */
  resolve(idOrName: string): Promise<ServerRecord | undefined>;
  /** `resolve` without opening secrets (no KMS call): at most two consistent reads. */
  resolvePlain(idOrName: string): Promise<Omit<ServerRecord, "headers" | "env"> | undefined>;
  /** Every server, sorted by name (two index queries, whatever the count; secrets opened in parallel). */
  list(): Promise<ServerRecord[]>;
  /** Every server without opening secrets (for sweeps and catalogue joins). */
  listPlain(): Promise<Array<Omit<ServerRecord, "headers" | "env">>>;
  /** Stores `spec` over `existing` if its version is still `existing.version`; renames move the claim. */
  update(existing: StoredIdentity, spec: ServerSpec): Promise<ServerRecord>;
  /** Deletes the server and everything it owns; false when it did not exist. */
  remove(id: string): Promise<boolean>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
    // Seal first: if sealing fails, nothing is written (fail closed).
    const [sealedHeaders, sealedEnv] = await Promise.all([
      headers && Object.keys(headers).length > 0
        ? sealer.seal(headers, serverFieldContext(record.id, "headers"))
        : undefined,
      env && Object.keys(env).length > 0 ? sealer.seal(env, serverFieldContext(record.id, "env")) : undefined,
    ]);
    return {
      ...keys.serverConfig(record.id),
      kind: KINDS.server,
      kindSort: record.name,
      ...plain,
      ...(record.transport === "http" ? { sealedHeaders } : { sealedEnv }),
    };
  }

  async function fromItem(item: Record<string, unknown>): Promise<ServerRecord> {
    const plain = plainFromItem(item);
    if (plain.transport === "http") {
      const sealed = item.sealedHeaders as SealedValue | undefined;
      const headers = sealed
        ? await sealer.open<Record<string, string>>(sealed, serverFieldContext(plain.id, "headers"))
        : {};
      return { ...plain, headers } as ServerRecord;
    }
    const sealed = item.sealedEnv as SealedValue | undefined;
    const env = sealed
      ? await sealer.open<Record<string, string>>(sealed, serverFieldContext(plain.id, "env"))
      : {};
    return { ...plain, env } as ServerRecord;
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
            Item: statusItem(record.id, { ...initialStatus(spec.enabled), generation: 1 }),
          },
        },
      ],
    };
  }

  async function replaceItems(existing: StoredIdentity, spec: ServerSpec, now: string) {
    const record = {
      ...spec,
      id: existing.id,
      version: existing.version + 1,
      createdAt: existing.createdAt,
      updatedAt: now,
    } as ServerRecord;
    const items: TransactItem[] = [
      {
        Put: {
          TableName: tableName,
          Item: await toItem(record),
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
    return { record, items };
  }

  async function transact(items: TransactItem[]): Promise<void> {
    await ddb.send(new TransactWriteCommand({ TransactItems: items }));
  }

  const repository: ServerRepository = {
    async create(spec) {
      const { record, items } = await newServerItems(spec, new Date().toISOString());
      try {
        await transact(items);
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
      const now = new Date().toISOString();
      const built = await Promise.all([
        ...creates.map((spec) => newServerItems(spec, now)),
        ...replaces.map(({ existing, spec }) => replaceItems(existing, spec, now)),
      ]);
      const items = built.flatMap((entry) => entry.items);
      if (items.length > MAX_TRANSACTION_ITEMS) {
        throw new AppError(
          "import.invalid_document",
          `Import at most ${Math.floor(MAX_TRANSACTION_ITEMS / 3)} servers at once.`,
        );
      }
      try {
        await transact(items);
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
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverConfig(id), ConsistentRead: true }),
      );
      return Item ? fromItem(Item) : undefined;
    },

    async getPlain(id) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverConfig(id), ConsistentRead: true }),
      );
      return Item ? plainFromItem(Item) : undefined;
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

    async resolvePlain(idOrName) {
      if (UUID.test(idOrName)) return repository.getPlain(idOrName.toLowerCase());
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.nameClaim(idOrName), ConsistentRead: true }),
      );
      return typeof Item?.serverId === "string" ? repository.getPlain(Item.serverId) : undefined;
    },

    async list() {
      const items = await queryKind(ddb, tableName, KINDS.server);
      return Promise.all(items.map(fromItem));
    },

    async listPlain() {
      const items = await queryKind(ddb, tableName, KINDS.server);
      return items.map(plainFromItem);
    },

    async update(existing, spec) {
      const { record, items } = await replaceItems(existing, spec, new Date().toISOString());
      try {
        await transact(items);
      } catch (error) {
        const failed = failedConditions(error);
        if (failed.includes(0)) {
          throw new AppError(
            "server.version_conflict",
            "The server changed since it was read; fetch it and retry.",
          );
        }
        if (failed.includes(2)) {
          throw new AppError("server.name_taken", `A server named '${spec.name}' already exists.`, {
            name: spec.name,
          });
        }
        throw error;
      }
      return record;
    },

    async remove(id) {
      const existing = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverConfig(id), ConsistentRead: true }),
      );
      if (!existing.Item) return false;
      // Bump the generation first: any in-flight attempt's fenced write now fails, so nothing reappears.
      await ddb
        .send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.serverStatus(id),
            UpdateExpression: "ADD generation :one",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":one": 1 },
          }),
        )
        .catch(() => undefined);
      const name = String(existing.Item.name);
      try {
        await transact([
          {
            Delete: {
              TableName: tableName,
              Key: keys.serverConfig(id),
              ConditionExpression: "attribute_exists(pk)",
            },
          },
          {
            Delete: {
              TableName: tableName,
              Key: keys.nameClaim(name),
              ConditionExpression: "serverId = :id",
              ExpressionAttributeValues: { ":id": id },
            },
          },
        ]);
      } catch (error) {
        if (failedConditions(error).length === 0) throw error;
        // A concurrent delete won; still sweep whatever is left below.
      }
      const owned = [
        ...(await queryAll(ddb, {
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": keys.serverPartition(id) },
          ProjectionExpression: "pk, sk",
        })),
        ...(await queryKind(ddb, tableName, ownedKind(id))),
      ];
      await deleteAll(ddb, tableName, owned as Array<{ pk: unknown; sk: unknown }>);
      return true;
    },
  };
  return repository;
}

/** The byKind partition of items a server owns outside its own partition (chat toggles, thread instances). */
export function ownedKind(serverId: string): string {
  return `OWNED#${serverId}`;
}

function plainFromItem(item: Record<string, unknown>): Omit<ServerRecord, "headers" | "env"> {
  const {
    pk: _pk,
    sk: _sk,
    kind: _kind,
    kindSort: _kindSort,
    sealedHeaders: _h,
    sealedEnv: _e,
    ...plain
  } = item;
  return plain as Omit<ServerRecord, "headers" | "env">;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
