import { type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { deleteAll, queryAll } from "./dynamo";
import { ownedKind } from "./servers";

/** A thread-scoped server instance registered for one thread, with that thread's worktree. */
export interface ThreadInstance {
  threadId: string;
  serverId: string;
  worktreeRoot: string;
  createdAt: string;
}

/** Registrations of thread-scoped stdio servers per thread (what the runner spawns lazily). */
export interface ThreadRegistry {
  /** Registers (serverId, threadId); an existing registration is kept as it is. Returns the stored one. */
  register(
    instance: Omit<ThreadInstance, "createdAt">,
  ): Promise<{ instance: ThreadInstance; created: boolean }>;
  get(threadId: string, serverId: string): Promise<ThreadInstance | undefined>;
  list(threadId: string): Promise<ThreadInstance[]>;
  /** Removes every registration of the thread; returns what was removed. */
  removeThread(threadId: string): Promise<ThreadInstance[]>;
}

const threadKey = (threadId: string, serverId: string) => ({
  pk: `THREAD#${threadId}`,
  sk: `SERVER#${serverId}`,
});

export function createThreadRegistry(ddb: DynamoDBDocumentClient, tableName: string): ThreadRegistry {
  const registry: ThreadRegistry = {
    async register({ threadId, serverId, worktreeRoot }) {
      const instance = { threadId, serverId, worktreeRoot, createdAt: new Date().toISOString() };
      try {
        await ddb.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...threadKey(threadId, serverId),
              kind: ownedKind(serverId),
              kindSort: `THREAD#${threadId}`,
              ...instance,
            },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        );
        return { instance, created: true };
      } catch (error) {
        if ((error as Error).name !== "ConditionalCheckFailedException") throw error;
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
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": `THREAD#${threadId}` },
        ConsistentRead: true,
      });
      return items.map(toInstance);
    },

    async removeThread(threadId) {
      const instances = await registry.list(threadId);
      await deleteAll(
        ddb,
        tableName,
        instances.map((instance) => threadKey(instance.threadId, instance.serverId)),
      );
      return instances;
    },
  };
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
