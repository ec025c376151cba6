import { createHash, randomBytes, randomUUID } from "node:crypto";
import { DeleteCommand, type DynamoDBDocumentClient, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { ToolPolicy } from "@mcpgw/core";
import { queryKind } from "./dynamo";
import { KINDS, TABLE_KEYS } from "./table";

/** A client API key as stored, minus the key material and its hash. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  /** Ids of the servers the key may use (stable across renames); null for every enabled server. */
  serverIds: string[] | null;
  /** The key's own call limits (each field omitted: the global one); null: the global limits. */
  rateLimit: KeyRateLimit | null;
  createdAt: string;
  /**
   * Who the key belongs to (`user:<name>` or `group:<name>`): the person who must sign in to open the
   * key's `per_user` authorization links (a member, for a group). Absent: it cannot start one.
   */
  owner?: string;
  /** Tool sets the key may use besides its servers (by name); absent or empty: none. */
  toolsets?: string[];
  /** What narrows the key's tools: an allow-list and refused annotation hints. */
  toolPolicy?: ToolPolicy;
}

/** A key's own call limits, over the global ones (CALLER_RATE_LIMIT, …) field by field. */
export interface KeyRateLimit {
  /** Calls per minute. */
  perMinute?: number;
  /** Calls at once after a pause (the bucket's size); never more than perMinute. */
  burst?: number;
  /** Calls in flight at once. */
  concurrent?: number;
}

/** What a key is created with besides its name and scope. */
export interface NewKeyOptions {
  owner?: string | undefined;
  rateLimit?: KeyRateLimit | null;
  toolsets?: string[] | undefined;
  toolPolicy?: ToolPolicy | undefined;
}

/** The prefix every client key starts with (so a key is recognisable, e.g. by secret scanners). */
export const API_KEY_PREFIX = "mgw_";

/** Client API keys, stored only as SHA-256 hashes (keys are 256-bit random: no slow hash needed). */
export interface ApiKeyStore {
  /** Creates a key scoped to `serverIds` (null: every server); the returned `key` is shown once, never stored. */
  create(
    name: string,
    serverIds: string[] | null,
    options?: NewKeyOptions,
  ): Promise<ApiKeyInfo & { key: string }>;
  list(): Promise<ApiKeyInfo[]>;
  /** Every live key by the hash it is stored under: one paginated index query, whatever the count. */
  byHash(): Promise<Map<string, ApiKeyInfo>>;
  /** Revokes a key by id; false when there is none. */
  revoke(id: string): Promise<boolean>;
}

/** The hash a key is stored under. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** A fresh key (its material, shown once) and what is stored of it. */
export function newApiKey(
  name: string,
  serverIds: string[] | null,
  options: NewKeyOptions = {},
): { key: string; info: ApiKeyInfo } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  const info: ApiKeyInfo = {
    id: randomUUID(),
    name,
    serverIds,
    rateLimit: options.rateLimit ?? null,
    createdAt: new Date().toISOString(),
    ...(options.owner ? { owner: options.owner } : {}),
    ...(options.toolsets?.length ? { toolsets: options.toolsets } : {}),
    ...(options.toolPolicy ? { toolPolicy: options.toolPolicy } : {}),
  };
  return { key, info };
}

const HASH_PREFIX = "KEYHASH#";
const keyItemKey = (hash: string) => ({ pk: `${HASH_PREFIX}${hash}`, sk: "KEY" });

export function createApiKeyStore(ddb: DynamoDBDocumentClient, tableName: string): ApiKeyStore {
  const items = () => queryKind(ddb, tableName, KINDS.apiKey);
  return {
    async create(name, serverIds, options = {}) {
      const { key, info } = newApiKey(name, serverIds, options);
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
      return (await items()).map(toInfo).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
    },

    async byHash() {
      return new Map(
        (await items()).map((item) => [String(item.pk).slice(HASH_PREFIX.length), toInfo(item)]),
      );
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
    id: String(item.id ?? ""),
    name: String(item.name ?? ""),
    serverIds: storedScope(item),
    rateLimit: storedRateLimit(item.rateLimit),
    createdAt: String(item.createdAt ?? ""),
    ...(typeof item.owner === "string" ? { owner: item.owner } : {}),
    ...storedToolScope(item),
  };
}

/**
 * A stored key's or access mapping's tool sets and policy. A damaged list of sets fails closed (a set
 * no one has: the key reaches no tool through it); a damaged policy refuses everything.
 */
export function storedToolScope(item: Record<string, unknown>): {
  toolsets?: string[];
  toolPolicy?: ToolPolicy;
} {
  const { toolsets, toolPolicy } = item;
  const sets =
    toolsets === undefined || toolsets === null
      ? undefined
      : Array.isArray(toolsets) && toolsets.every((name) => typeof name === "string")
        ? (toolsets as string[])
        : [""];
  const policy =
    toolPolicy === undefined || toolPolicy === null
      ? undefined
      : typeof toolPolicy === "object"
        ? (toolPolicy as ToolPolicy)
        : { allow: [] };
  return { ...(sets?.length ? { toolsets: sets } : {}), ...(policy ? { toolPolicy: policy } : {}) };
}

/** A stored key's own limits: the whole positive numbers it holds; none (null) when there are none. */
function storedRateLimit(value: unknown): KeyRateLimit | null {
  if (typeof value !== "object" || value === null) return null;
  const fields = ["perMinute", "burst", "concurrent"] as const;
  const kept = Object.fromEntries(
    fields.flatMap((field) => {
      const number = (value as Record<string, unknown>)[field];
      return typeof number === "number" && Number.isInteger(number) && number > 0 ? [[field, number]] : [];
    }),
  );
  return Object.keys(kept).length > 0 ? kept : null;
}

/**
 * The server ids a stored key may use. Keys made before scopes bound ids hold `servers` (names) and no
 * `serverIds`; a name can be renamed away or taken by a new server, so such a key fails closed: it is
 * scoped to nothing (re-create it to scope it again). A key with neither is unscoped, as it always was;
 * a scope that is there but damaged scopes to nothing.
 */
function storedScope(item: Record<string, unknown>): string[] | null {
  // A damaged scope (not a list of ids) fails closed too: never wider than what was stored.
  if (item.serverIds !== undefined && item.serverIds !== null) {
    return Array.isArray(item.serverIds)
      ? item.serverIds.filter((id): id is string => typeof id === "string")
      : [];
  }
  if (item.serverIds === null) return null;
  if (item.servers !== undefined) return [];
  return null;
}
