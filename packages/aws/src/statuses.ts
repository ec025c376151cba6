import { gunzipSync, gzipSync } from "node:zlib";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  type AttemptOutcome,
  attemptChanges,
  initialStatus,
  type ServerStatus,
  type StoredStatus,
  type ToolInfo,
} from "@mcpgw/core";
import { failedConditions, isConditionFailure, queryKind } from "./dynamo";
import { KINDS, keys } from "./table";

/** The stored item of a server's status. */
export function statusItem(serverId: string, status: StoredStatus): Record<string, unknown> {
  return { ...keys.serverStatus(serverId), kind: KINDS.status, kindSort: serverId, serverId, ...status };
}

/** A server's tool catalogue from its last good probe. */
export interface Catalog {
  serverId: string;
  tools: ToolInfo[];
  updatedAt: string;
}

/** Live status under the generation fence, and the tool catalogue written with it. */
export interface StatusRepository {
  get(serverId: string): Promise<StoredStatus | undefined>;
  /** Every status, by server id (one index query). */
  list(): Promise<Map<string, StoredStatus>>;
  /**
   * Supersedes every earlier attempt: generation + 1, state `connecting` or `disabled`, reason and
   * error cleared. Returns the new status; undefined when the server has no status (deleted).
   */
  bump(serverId: string, state: "connecting" | "disabled"): Promise<StoredStatus | undefined>;
  /**
   * Writes an attempt's outcome — and on success its tool catalogue, in the same transaction — only if
   * the stored generation still equals `generation`. False when fenced off (stale or deleted), or when
   * `jobId` already recorded its outcome (a redelivered job: at-least-once delivery made idempotent).
   */
  recordAttempt(
    serverId: string,
    generation: number,
    outcome: AttemptOutcome,
    tools?: ToolInfo[],
    options?: { jobId?: string },
  ): Promise<boolean>;
  getCatalog(serverId: string): Promise<Catalog | undefined>;
  /** Every server's catalogue (one index query). */
  listCatalogs(): Promise<Catalog[]>;
}

const STATUS_FIELDS = Object.keys(initialStatus(true)) as Array<keyof ServerStatus>;

export function createStatusRepository(ddb: DynamoDBDocumentClient, tableName: string): StatusRepository {
  return {
    async get(serverId) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverStatus(serverId), ConsistentRead: true }),
      );
      return Item ? toStatus(Item) : undefined;
    },

    async list() {
      const items = await queryKind(ddb, tableName, KINDS.status);
      return new Map(items.map((item) => [String(item.serverId), toStatus(item)]));
    },

    async bump(serverId, state) {
      try {
        const { Attributes } = await ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keys.serverStatus(serverId),
            UpdateExpression: "SET #state = :state, reason = :null, #error = :null ADD generation :one",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeNames: { "#state": "state", "#error": "error" },
            ExpressionAttributeValues: { ":state": state, ":null": null, ":one": 1 },
            ReturnValues: "ALL_NEW",
          }),
        );
        return Attributes ? toStatus(Attributes) : undefined;
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    },

    async recordAttempt(serverId, generation, outcome, tools, options: { jobId?: string } = {}) {
      const changes: Record<string, unknown> = {
        ...attemptChanges(outcome),
        ...(options.jobId ? { lastJobId: options.jobId } : {}),
      };
      const names = Object.keys(changes);
      const statusUpdate = {
        Update: {
          TableName: tableName,
          Key: keys.serverStatus(serverId),
          UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(", ")}`,
          ConditionExpression: `attribute_exists(pk) AND generation = :generation${
            options.jobId ? " AND (attribute_not_exists(lastJobId) OR lastJobId <> :v_job)" : ""
          }`,
          ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#f${i}`, name])),
          ExpressionAttributeValues: {
            ...Object.fromEntries(names.map((name, i) => [`:v${i}`, changes[name]])),
            ":generation": generation,
            ...(options.jobId ? { ":v_job": options.jobId } : {}),
          },
        },
      };
      const catalogPut =
        outcome.ok && tools
          ? [
              {
                Put: {
                  TableName: tableName,
                  Item: {
                    ...keys.serverCatalog(serverId),
                    kind: KINDS.catalog,
                    kindSort: serverId,
                    serverId,
                    updatedAt: outcome.at,
                    tools: gzipSync(JSON.stringify(tools)),
                  },
                },
              },
            ]
          : [];
      try {
        await ddb.send(new TransactWriteCommand({ TransactItems: [statusUpdate, ...catalogPut] }));
        return true;
      } catch (error) {
        if (failedConditions(error).includes(0)) return false;
        throw error;
      }
    },

    async getCatalog(serverId) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.serverCatalog(serverId) }),
      );
      return Item ? toCatalog(Item) : undefined;
    },

    async listCatalogs() {
      const items = await queryKind(ddb, tableName, KINDS.catalog);
      return items.map(toCatalog);
    },
  };
}

function toStatus(item: Record<string, unknown>): StoredStatus {
  const status = Object.fromEntries(
    STATUS_FIELDS.map((field) => [field, item[field] ?? null]),
  ) as ServerStatus;
  return { ...status, toolCount: Number(item.toolCount ?? 0), generation: Number(item.generation ?? 0) };
}

function toCatalog(item: Record<string, unknown>): Catalog {
  const tools = JSON.parse(gunzipSync(item.tools as Uint8Array).toString("utf8")) as ToolInfo[];
  return { serverId: String(item.serverId), tools, updatedAt: String(item.updatedAt) };
}
