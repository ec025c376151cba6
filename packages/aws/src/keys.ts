import { createHash, randomBytes, randomUUID } from "node:crypto";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { queryKind } from "./dynamo";
import { KINDS, TABLE_KEYS } from "./table";

/** A client API key as it may be shown: never the key material, never its hash. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  /** Server names the key may use; null for every enabled server. */
  servers: string[] | null;
  createdAt: string;
}

/** The prefix every client key starts with (so a key is recognisable, e.g. by secret scanners). */
export const API_KEY_PREFIX = "mgw_";

/** Client API keys, stored only as SHA-256 hashes (keys are 256-bit random: no slow hash needed). */
export interface ApiKeyStore {
  /** Creates a key; the returned `key` is shown once and never stored. */
  create(name: string, servers: string[] | null): Promise<ApiKeyInfo & { key: string }>;
  list(): Promise<ApiKeyInfo[]>;
  /** The key's info when `key` is a live key. */
  verify(key: string): Promise<ApiKeyInfo | undefined>;
  /** Revokes a key by id; false when there is none. */
  revoke(id: string): Promise<boolean>;
}

/** The hash a key is stored under. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

const keyItemKey = (hash: string) => ({ pk: `KEYHASH#${hash}`, sk: "KEY" });

export function createApiKeyStore(ddb: DynamoDBDocumentClient, tableName: string): ApiKeyStore {
  return {
    async create(name, servers) {
      const key = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
      const info: ApiKeyInfo = { id: randomUUID(), name, servers, createdAt: new Date().toISOString() };
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...keyItemKey(hashApiKey(key)), kind: KINDS.apiKey, kindSort: info.id, ...info },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return { ...info, key };
    },

    async list() {
      const items = await queryKind(ddb, tableName, KINDS.apiKey);
      return items.map(toInfo).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
    },

    async verify(key) {
      if (!key.startsWith(API_KEY_PREFIX)) return undefined;
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keyItemKey(hashApiKey(key)), ConsistentRead: true }),
      );
      return Item ? toInfo(Item) : undefined;
    },

    async revoke(id) {
      const { Items } = await ddb.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: TABLE_KEYS.byKindIndex,
          KeyConditionExpression: "#kind = :kind AND #sort = :id",
          ExpressionAttributeNames: { "#kind": TABLE_KEYS.kind, "#sort": TABLE_KEYS.kindSort },
          ExpressionAttributeValues: { ":kind": KINDS.apiKey, ":id": id },
        }),
      );
      const item = Items?.[0];
      if (!item) return false;
      await ddb.send(new DeleteCommand({ TableName: tableName, Key: { pk: item.pk, sk: item.sk } }));
      return true;
    },
  };
}

function toInfo(item: Record<string, unknown>): ApiKeyInfo {
  return {
    id: String(item.id),
    name: String(item.name),
    servers: Array.isArray(item.servers) ? (item.servers as string[]) : null,
    createdAt: String(item.createdAt),
  };
}
