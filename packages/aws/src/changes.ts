import { randomUUID } from "node:crypto";
import { type DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { type PlainServer, readStoredStatus, type StoredStatus } from "@mcpgw/core";
import { conditionalWrite, queryAll } from "./dynamo";
import { plainFromItem } from "./servers";
import { type Catalog, toCatalog } from "./statuses";
import { EPOCH_STAMP_PREFIX, epochItem, FEED, keys, stampOf, TABLE_KEYS } from "./table";

export type { FeedStamps } from "./table";

/** A write of a server's config, status or catalogue (or its delete), stamped `at` by its writer's clock. */
export interface ServerChange {
  serverId: string;
  /** Which item was written (with `at`, names the write). */
  item: string;
  /** Epoch ms. */
  at: number;
  /** The server's delete (its tombstone): a read that lists no such server has seen it. */
  gone?: true;
}

/** What the data plane knows of one server: its config (no secret opened), status and catalogue. */
export interface ServerState {
  serverId: string;
  /** Absent: the server is gone. */
  server?: PlainServer;
  status?: StoredStatus;
  catalog?: Catalog;
}

/** One look at the change feed: what changed, and the table's epoch as the same query saw it. */
export interface FeedRead {
  changes: ServerChange[];
  /**
   * The table's epoch (undefined: it has none yet). Another value than last time, or none where there
   * was one, means the table was deleted and made again: what was read from the old one is void.
   */
  epoch: string | undefined;
}

/**
 * The servers' change feed: every write of a server's config, status or catalogue head stamps the
 * item with the time it was written, on an index of its own; a delete leaves a stamped tombstone.
 * So a reader that looked at time T learns what changed since in one query, and reads only those.
 * The table's epoch rides on the same query (its stamp sorts after every time).
 */
export interface ChangeFeed {
  /** The writes stamped at or after `sinceMs` (the latest of each item), and the epoch: one index query. */
  since(sinceMs: number): Promise<FeedRead>;
  /** Gives the table an epoch unless it has one (the first writer's wins): one conditional write. */
  ensureEpoch(): Promise<void>;
  /** The current state of each server: one consistent read of its partition each. */
  read(serverIds: readonly string[]): Promise<ServerState[]>;
}

/** The change feed on the table's `byChange` index (see `changeStamp` for what stamps it). */
export function createChangeFeed(ddb: DynamoDBDocumentClient, tableName: string): ChangeFeed {
  return {
    async since(sinceMs) {
      const items = await queryAll(ddb, {
        TableName: tableName,
        IndexName: TABLE_KEYS.byChangeIndex,
        KeyConditionExpression: "#feed = :feed AND #at >= :since",
        ExpressionAttributeNames: { "#feed": TABLE_KEYS.changeFeed, "#at": TABLE_KEYS.changedAt },
        ExpressionAttributeValues: { ":feed": FEED, ":since": stampOf(sinceMs) },
      });
      let epoch: string | undefined;
      const changes: ServerChange[] = [];
      for (const item of items) {
        const stamp = String(item[TABLE_KEYS.changedAt]);
        if (stamp.startsWith(EPOCH_STAMP_PREFIX)) epoch = stamp.slice(EPOCH_STAMP_PREFIX.length);
        else {
          const serverId = String(item.pk).slice(keys.serverPartition("").length);
          const gone = item.sk === keys.serverTombstone(serverId).sk;
          changes.push({ serverId, item: String(item.sk), at: Number(stamp), ...(gone ? { gone } : {}) });
        }
      }
      return { changes, epoch };
    },

    ensureEpoch: () => writeEpoch(ddb, tableName),

    async read(serverIds) {
      return Promise.all(
        serverIds.map(async (serverId) => {
          const items = await queryAll(ddb, {
            TableName: tableName,
            KeyConditionExpression: "pk = :pk",
            ExpressionAttributeValues: { ":pk": keys.serverPartition(serverId) },
            ConsistentRead: true,
          });
          return stateOf(serverId, items);
        }),
      );
    },
  };
}

/** A server's state from the items of its partition (config, status, catalogue head and parts). */
function stateOf(serverId: string, items: Record<string, unknown>[]): ServerState {
  const bySort = (sk: string) => items.find((item) => item.sk === sk);
  const config = bySort(keys.serverConfig(serverId).sk);
  const server = config && plainFromItem(config);
  // An unreadable config serves nothing: to the data plane it is gone.
  if (!server || server.unreadable) return { serverId };
  const statusItem = bySort(keys.serverStatus(serverId).sk);
  const status = statusItem && readStoredStatus(statusItem);
  const catalog = toCatalog(
    items.filter((item) => String(item.sk).startsWith(keys.serverCatalog(serverId).sk)),
  );
  return {
    serverId,
    server,
    ...(status ? { status } : {}),
    ...(catalog ? { catalog } : {}),
  };
}

/**
 * Writes a new epoch into the table unless it has one: the bootstrap does when it makes the table; on
 * a deployed table, the data plane does when its feed shows none (the first writer's epoch wins).
 */
export async function writeEpoch(ddb: DynamoDBDocumentClient, tableName: string): Promise<void> {
  await conditionalWrite(() =>
    ddb.send(
      new PutCommand({
        TableName: tableName,
        Item: epochItem(randomUUID()),
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
}
