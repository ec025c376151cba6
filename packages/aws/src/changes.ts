import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { PlainServer, StoredStatus } from "@mcpgw/core";
import { queryAll } from "./dynamo";
import { plainFromItem } from "./servers";
import { type Catalog, toCatalog, toStatus } from "./statuses";
import { FEED, keys, stampOf, TABLE_KEYS } from "./table";

/** A write of a server's config, status or catalogue (or its delete), stamped `at` by its writer's clock. */
export interface ServerChange {
  serverId: string;
  /** Which item was written (with `at`, names the write). */
  item: string;
  /** Epoch ms. */
  at: number;
}

/** What the data plane knows of one server: its config (no secret opened), status and catalogue. */
export interface ServerState {
  serverId: string;
  /** Absent: the server is gone. */
  server?: PlainServer;
  status?: StoredStatus;
  catalog?: Catalog;
}

/**
 * The servers' change feed: every write of a server's config, status or catalogue head stamps the
 * item with the time it was written, on an index of its own; a delete leaves a stamped tombstone.
 * So a reader that looked at time T learns what changed since in one query, and reads only those.
 */
export interface ChangeFeed {
  /** The writes stamped at or after `sinceMs` (the latest of each item): one index query. */
  since(sinceMs: number): Promise<ServerChange[]>;
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
      return items.map((item) => ({
        serverId: String(item.pk).slice(keys.serverPartition("").length),
        item: String(item.sk),
        at: Number(item[TABLE_KEYS.changedAt]),
      }));
    },

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
  const status = statusItem && toStatus(statusItem);
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
