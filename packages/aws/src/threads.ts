import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { AppError } from "@mcpgw/core";
import { deleteAll, isConditionFailure, queryAll } from "./dynamo";
import { ownedKind } from "./servers";
import { KINDS, TABLE_KEYS } from "./table";

/** A thread-scoped server instance registered for one thread, with that thread's worktree. */
export interface ThreadInstance {
  threadId: string;
  serverId: string;
  worktreeRoot: string;
  createdAt: string;
}

/** The owner of threads the admin token started (a key's threads are owned by the key's id, a UUID). */
export const ADMIN_OWNER = "admin";

/** A thread as listed: who owns it, since when, and the servers it registered instances of. */
export interface ThreadSummary {
  threadId: string;
  /** `admin`, or the id of the client key that started it. */
  owner: string;
  createdAt: string;
  /** Servers with an instance in the thread (a deleted server's id may linger: filter on read). */
  serverIds: string[];
}

/** A thread with its registered instances. */
export interface ThreadDetail {
  threadId: string;
  owner: string;
  createdAt: string;
  instances: ThreadInstance[];
}

/** Registrations of thread-scoped stdio servers per thread (what the runner spawns lazily), and who owns each thread. */
export interface ThreadRegistry {
  /**
   * Registers (serverId, threadId) for `owner`; an existing registration is kept as it is. The first
   * registration makes `owner` the thread's owner; a key registering in a thread another owns gets
   * `request.not_found` (the admin may register in any thread, which keeps its owner).
   */
  register(
    instance: Omit<ThreadInstance, "createdAt"> & { owner: string },
  ): Promise<{ instance: ThreadInstance; created: boolean }>;
  get(threadId: string, serverId: string): Promise<ThreadInstance | undefined>;
  /** The thread's registered instances. */
  list(threadId: string): Promise<ThreadInstance[]>;
  /** The thread, its owner and instances (one consistent query); undefined when there is none. */
  thread(threadId: string): Promise<ThreadDetail | undefined>;
  /** Every thread (one index query), or only those of `owner`. */
  threads(owner?: string): Promise<ThreadSummary[]>;
  /** Removes the thread: every registration and its ownership record; returns the registrations removed. */
  removeThread(threadId: string): Promise<ThreadInstance[]>;
  /**
   * Takes back one registration (a start the runner refused): the instance and its server in the
   * thread's list; a thread left with no server goes too.
   */
  unregister(threadId: string, serverId: string): Promise<void>;
}

const threadPartition = (threadId: string) => `THREAD#${threadId}`;
const INSTANCE_PREFIX = "SERVER#";
const threadKey = (threadId: string, serverId: string) => ({
  pk: threadPartition(threadId),
  sk: `${INSTANCE_PREFIX}${serverId}`,
});
/** The thread's ownership record: `kind` THREAD, `kindSort` `<owner>#<threadId>` (lists per owner). */
const metaKey = (threadId: string) => ({ pk: threadPartition(threadId), sk: "META" });

export function createThreadRegistry(ddb: DynamoDBDocumentClient, tableName: string): ThreadRegistry {
  /** Creates or extends the meta item; a key may only extend its own thread. */
  function metaUpdate(threadId: string, serverId: string, owner: string, now: string) {
    return {
      TableName: tableName,
      Key: metaKey(threadId),
      UpdateExpression:
        "SET threadId = :thread, #owner = if_not_exists(#owner, :owner), createdAt = if_not_exists(createdAt, :now), " +
        "#kind = :kind, #kindSort = if_not_exists(#kindSort, :kindSort) ADD serverIds :server",
      ...(owner === ADMIN_OWNER
        ? {}
        : { ConditionExpression: "attribute_not_exists(pk) OR #owner = :owner" }),
      ExpressionAttributeNames: {
        "#owner": "owner",
        "#kind": TABLE_KEYS.kind,
        "#kindSort": TABLE_KEYS.kindSort,
      },
      ExpressionAttributeValues: {
        ":thread": threadId,
        ":owner": owner,
        ":now": now,
        ":kind": KINDS.thread,
        ":kindSort": `${owner}#${threadId}`,
        ":server": new Set([serverId]),
      },
    };
  }

  const registry: ThreadRegistry = {
    async register({ threadId, serverId, worktreeRoot, owner }) {
      const instance = { threadId, serverId, worktreeRoot, createdAt: new Date().toISOString() };
      // Claim (or extend) the thread first, then register the instance: two conditional writes, not a
      // transaction (emulators do not isolate concurrent transactions). Stopped in between, the thread
      // is its owner's with a server listed and no instance yet; the owner's next start completes it.
      try {
        await ddb.send(new UpdateCommand(metaUpdate(threadId, serverId, owner, instance.createdAt)));
      } catch (error) {
        if (isConditionFailure(error))
          throw new AppError("request.not_found", `No thread '${threadId}'.`, { threadId });
        throw error;
      }
      try {
        await ddb.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...threadKey(threadId, serverId),
              kind: ownedKind(serverId),
              kindSort: threadPartition(threadId),
              ...instance,
            },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        );
        return { instance, created: true };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Registered before: keep it as it is.
        const existing = await registry.get(threadId, serverId);
        if (!existing) throw error;
        return { instance: existing, created: false };
      }
    },

    async get(threadId, serverId) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: threadKey(threadId, serverId), ConsistentRead: true }),
      );
      return Item ? toInstance(Item) : undefined;
    },

    async list(threadId) {
      const items = await queryAll(ddb, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :instance)",
        ExpressionAttributeValues: { ":pk": threadPartition(threadId), ":instance": INSTANCE_PREFIX },
        ConsistentRead: true,
      });
      return items.map(toInstance);
    },

    async thread(threadId) {
      const items = await partition(threadId);
      const meta = items.find((item) => item.sk === metaKey(threadId).sk);
      const instances = items.filter((item) => String(item.sk).startsWith(INSTANCE_PREFIX)).map(toInstance);
      if (meta) {
        // An owner record without an owner (never written so) fails closed: the admin's.
        const owner = typeof meta.owner === "string" ? meta.owner : ADMIN_OWNER;
        return { threadId, owner, createdAt: String(meta.createdAt), instances };
      }
      if (instances.length === 0) return undefined;
      // Registered before ownership was recorded, when only the admin could start threads: the admin's.
      const createdAt = instances.map((instance) => instance.createdAt).sort()[0] ?? "";
      return { threadId, owner: ADMIN_OWNER, createdAt, instances };
    },

    async threads(owner) {
      const items = await queryAll(ddb, {
        TableName: tableName,
        IndexName: TABLE_KEYS.byKindIndex,
        KeyConditionExpression:
          owner === undefined ? "#kind = :kind" : "#kind = :kind AND begins_with(#kindSort, :owner)",
        ExpressionAttributeNames: {
          "#kind": TABLE_KEYS.kind,
          ...(owner === undefined ? {} : { "#kindSort": TABLE_KEYS.kindSort }),
        },
        ExpressionAttributeValues: {
          ":kind": KINDS.thread,
          ...(owner === undefined ? {} : { ":owner": `${owner}#` }),
        },
      });
      return items.map((item) => ({
        threadId: String(item.threadId),
        owner: String(item.owner),
        createdAt: String(item.createdAt),
        serverIds: [...((item.serverIds as Set<string> | undefined) ?? [])].sort(),
      }));
    },

    async removeThread(threadId) {
      const items = await partition(threadId);
      await deleteAll(
        ddb,
        tableName,
        items.map((item) => ({ pk: item.pk, sk: item.sk })),
      );
      return items.filter((item) => String(item.sk).startsWith(INSTANCE_PREFIX)).map(toInstance);
    },

    async unregister(threadId, serverId) {
      await ddb.send(new DeleteCommand({ TableName: tableName, Key: threadKey(threadId, serverId) }));
      const { Attributes } = await ddb
        .send(
          new UpdateCommand({
            TableName: tableName,
            Key: metaKey(threadId),
            UpdateExpression: "DELETE serverIds :server",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":server": new Set([serverId]) },
            ReturnValues: "ALL_NEW",
          }),
        )
        .catch((error) => {
          if (isConditionFailure(error)) return { Attributes: undefined };
          throw error;
        });
      // An empty set is no attribute: a thread with no server left has no reason to exist.
      if (Attributes && !Attributes.serverIds) {
        await ddb
          .send(
            new DeleteCommand({
              TableName: tableName,
              Key: metaKey(threadId),
              ConditionExpression: "attribute_not_exists(serverIds)",
            }),
          )
          .catch((error) => {
            if (!isConditionFailure(error)) throw error;
          });
      }
    },
  };

  /** Every item of the thread's partition: its meta item and its instances. */
  function partition(threadId: string) {
    return queryAll(ddb, {
      TableName: tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": threadPartition(threadId) },
      ConsistentRead: true,
    });
  }
  return registry;
}

function toInstance(item: Record<string, unknown>): ThreadInstance {
  return {
    threadId: String(item.threadId),
    serverId: String(item.serverId),
    worktreeRoot: String(item.worktreeRoot),
    createdAt: String(item.createdAt),
  };
}
