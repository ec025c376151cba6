/**
 * What the OAuth authorization server keeps: registered clients (DCR), pending authorizations,
 * authorization codes, refresh-token families and who may reach which servers. Every secret (code,
 * refresh token, transaction id) is stored only as its SHA-256 hash — the caller hashes
 * ({@link hashOAuthSecret}); each item carries the table's TTL attribute.
 */
import { createHash } from "node:crypto";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { ToolPolicy } from "@mcpgw/core";
import { batchGet, failedConditions, isConditionFailure, queryKind } from "./dynamo";
import { storedToolScope } from "./keys";
import { KINDS, TABLE_KEYS } from "./table";

/** A client registered by RFC 7591 dynamic registration (public: no secret). */
export interface OAuthClientRecord {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  grantTypes: string[];
  createdAt: string;
}

/** An authorization under way: what the consent page's POST completes (single use). */
export interface AuthorizationTransaction {
  clientId: string;
  clientName: string;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  scope: string;
  /** SHA-256 of the CSRF token the page's form and cookie carry. */
  csrfHash: string;
  /** Whether the client may hold refresh tokens (its grant types name `refresh_token`). */
  refreshable: boolean;
  /** Who signed in on the page, once they have (the consent step follows). */
  signedIn?: GrantSubject;
  /** Epoch seconds. */
  expiresAt: number;
}

/** Who signed in, as the grant records them: the user and the groups they said they are in. */
export interface GrantSubject {
  sub: string;
  groups: string[];
}

/** An issued authorization code (single use, minutes long). */
export interface AuthorizationCodeRecord extends GrantSubject {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  /** The refresh-token family the code's tokens start (revoked if the code is used twice). */
  familyId: string;
  /** Whether a refresh token is issued with the access token. */
  refreshable: boolean;
  /** Epoch seconds. */
  expiresAt: number;
}

/** What a refresh token carries; a rotated token keeps its family and the family's end. */
export interface RefreshGrant extends GrantSubject {
  familyId: string;
  clientId: string;
  resource: string;
  scope: string;
  /** Epoch seconds: the family's absolute end. */
  expiresAt: number;
}

/** A refresh token as looked up: its grant, whether it was already used, whether its family is revoked. */
export interface RefreshLookup {
  grant: RefreshGrant;
  used: boolean;
  familyRevoked: boolean;
}

/** What rotating a refresh token did. `reused`: it had been used before, and its family is now revoked. */
export type RotateOutcome =
  | { outcome: "rotated"; previous: RefreshGrant }
  | { outcome: "reused" | "revoked" | "unknown" };

/** `user:<name>` or `group:<name>`. */
export type AccessSubject = `user:${string}` | `group:${string}`;

/** Which servers a user or group may reach through OAuth: ids (null: every server). */
export interface AccessMapping {
  subject: AccessSubject;
  serverIds: string[] | null;
  /** Tool sets the subject may use besides its servers (absent: none). */
  toolsets?: string[];
  /** What narrows the subject's tools (absent: nothing). */
  toolPolicy?: ToolPolicy;
  updatedAt: string;
}

/** A mapping's tool sets and policy, as `putAccess` takes them. */
export interface AccessTools {
  toolsets?: string[] | undefined;
  toolPolicy?: ToolPolicy | undefined;
}

/** How long a registered client lives before it first obtains a token. */
export const CLIENT_UNUSED_SECONDS = 24 * 3600;
/** How long a client lives after it last obtained a token (the length of a refresh family). */
export const CLIENT_IDLE_SECONDS = 30 * 24 * 3600;

/** The authorization server's storage port. Reads of expired items answer as if they were gone. */
export interface OAuthStore {
  /** Registers a client until `expiresAt` (epoch seconds; default: {@link CLIENT_UNUSED_SECONDS} from now). */
  saveClient(client: OAuthClientRecord, expiresAt?: number): Promise<void>;
  /** The client while it lives (one registered before clients expired: until {@link CLIENT_IDLE_SECONDS} after it was). */
  client(clientId: string, now?: number): Promise<OAuthClientRecord | undefined>;
  /** The client obtained a token: it lives {@link CLIENT_IDLE_SECONDS} from `now`. An expired or unknown one stays gone. */
  clientUsed(clientId: string, now?: number): Promise<void>;

  saveTransaction(hash: string, transaction: AuthorizationTransaction): Promise<void>;
  transaction(hash: string, now?: number): Promise<AuthorizationTransaction | undefined>;
  /** Removes and returns the transaction: of two concurrent takers, one gets it. */
  takeTransaction(hash: string, now?: number): Promise<AuthorizationTransaction | undefined>;

  saveCode(hash: string, code: AuthorizationCodeRecord): Promise<void>;
  /**
   * Marks the code used, atomically: `firstUse` is true for exactly one caller; later callers get the
   * record with `firstUse: false` (a replay). Unknown or expired: undefined.
   */
  consumeCode(
    hash: string,
    now?: number,
  ): Promise<{ code: AuthorizationCodeRecord; firstUse: boolean } | undefined>;

  /** Starts a family with its first refresh token (one transaction). */
  issueRefresh(hash: string, grant: RefreshGrant): Promise<void>;
  refresh(hash: string, now?: number): Promise<RefreshLookup | undefined>;
  /**
   * Replaces the token `oldHash` by `newHash` in one transaction: the old one marked used, the family
   * checked live, the new one written. A token used before revokes its whole family (`reused`).
   */
  rotateRefresh(oldHash: string, newHash: string, now?: number): Promise<RotateOutcome>;
  /** Revokes a family: none of its refresh tokens works again. Revoking an unknown family is no error. */
  revokeFamily(familyId: string, now?: number): Promise<void>;

  listAccess(): Promise<AccessMapping[]>;
  /** The mappings of those of `subjects` that have one. */
  access(subjects: AccessSubject[]): Promise<AccessMapping[]>;
  putAccess(subject: AccessSubject, serverIds: string[] | null, tools?: AccessTools): Promise<AccessMapping>;
  /** False when there was none. */
  deleteAccess(subject: AccessSubject): Promise<boolean>;
}

/** The hash a code, refresh token or transaction id is stored under (each is 256-bit random). */
export function hashOAuthSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

/** Epoch seconds now. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const keyOf = {
  client: (id: string) => ({ pk: `OAUTHCLIENT#${id}`, sk: "CLIENT" }),
  transaction: (hash: string) => ({ pk: `OAUTHTX#${hash}`, sk: "TX" }),
  code: (hash: string) => ({ pk: `OAUTHCODE#${hash}`, sk: "CODE" }),
  refresh: (hash: string) => ({ pk: `OAUTHRT#${hash}`, sk: "RT" }),
  family: (id: string) => ({ pk: `OAUTHFAM#${id}`, sk: "FAMILY" }),
  access: (subject: string) => ({ pk: `ACCESS#${subject}`, sk: "ACCESS" }),
};

/**
 * When a stored client expires (epoch seconds): its TTL attribute, or — registered before clients
 * expired, with none — {@link CLIENT_IDLE_SECONDS} after it was.
 */
export function clientExpiry(client: OAuthClientRecord, ttl: unknown): number {
  if (typeof ttl === "number") return ttl;
  return Math.floor(Date.parse(client.createdAt) / 1000) + CLIENT_IDLE_SECONDS;
}

type Item = Record<string, unknown>;
/** Whether a stored item exists and its TTL (epoch seconds) is still ahead of `now`. */
export const live = (item: Item | undefined, now: number): item is Item =>
  item !== undefined && typeof item[TABLE_KEYS.ttl] === "number" && (item[TABLE_KEYS.ttl] as number) > now;

/** The OAuth store on the single table. */
export function createOAuthStore(ddb: DynamoDBDocumentClient, tableName: string): OAuthStore {
  const get = async (key: { pk: string; sk: string }) =>
    (await ddb.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
  const put = (item: Item) => ddb.send(new PutCommand({ TableName: tableName, Item: item }));
  const revokeFamily = async (familyId: string, now = nowSeconds()) => {
    await ddb
      .send(
        new UpdateCommand({
          TableName: tableName,
          Key: keyOf.family(familyId),
          UpdateExpression: "SET revokedAt = if_not_exists(revokedAt, :now)",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":now": now },
        }),
      )
      .catch((error) => {
        if (!isConditionFailure(error)) throw error;
      });
  };

  return {
    async saveClient(client, expiresAt = nowSeconds() + CLIENT_UNUSED_SECONDS) {
      await put({ ...keyOf.client(client.clientId), data: client, [TABLE_KEYS.ttl]: expiresAt });
    },
    async client(clientId, now = nowSeconds()) {
      const item = await get(keyOf.client(clientId));
      if (!item) return undefined;
      const client = item.data as OAuthClientRecord;
      return clientExpiry(client, item[TABLE_KEYS.ttl]) > now ? client : undefined;
    },
    async clientUsed(clientId, now = nowSeconds()) {
      await ddb
        .send(
          new UpdateCommand({
            TableName: tableName,
            Key: keyOf.client(clientId),
            UpdateExpression: "SET #ttl = :until",
            ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(#ttl) OR #ttl > :now)",
            ExpressionAttributeNames: { "#ttl": TABLE_KEYS.ttl },
            ExpressionAttributeValues: { ":until": now + CLIENT_IDLE_SECONDS, ":now": now },
          }),
        )
        .catch((error) => {
          if (!isConditionFailure(error)) throw error;
        });
    },

    async saveTransaction(hash, transaction) {
      await put({ ...keyOf.transaction(hash), data: transaction, [TABLE_KEYS.ttl]: transaction.expiresAt });
    },
    async transaction(hash, now = nowSeconds()) {
      const item = await get(keyOf.transaction(hash));
      return live(item, now) ? (item.data as AuthorizationTransaction) : undefined;
    },
    async takeTransaction(hash, now = nowSeconds()) {
      const { Attributes } = await ddb.send(
        new DeleteCommand({ TableName: tableName, Key: keyOf.transaction(hash), ReturnValues: "ALL_OLD" }),
      );
      return live(Attributes, now) ? (Attributes.data as AuthorizationTransaction) : undefined;
    },

    async saveCode(hash, code) {
      await put({ ...keyOf.code(hash), data: code, [TABLE_KEYS.ttl]: code.expiresAt });
    },
    async consumeCode(hash, now = nowSeconds()) {
      try {
        const { Attributes } = await ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: keyOf.code(hash),
            UpdateExpression: "SET usedAt = :now",
            ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(usedAt) AND #ttl > :now",
            ExpressionAttributeNames: { "#ttl": TABLE_KEYS.ttl },
            ExpressionAttributeValues: { ":now": now },
            ReturnValues: "ALL_NEW",
          }),
        );
        return Attributes ? { code: Attributes.data as AuthorizationCodeRecord, firstUse: true } : undefined;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      const item = await get(keyOf.code(hash));
      return live(item, now) ? { code: item.data as AuthorizationCodeRecord, firstUse: false } : undefined;
    },

    async issueRefresh(hash, grant) {
      await ddb.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: { ...keyOf.family(grant.familyId), [TABLE_KEYS.ttl]: grant.expiresAt },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
            {
              Put: {
                TableName: tableName,
                Item: { ...keyOf.refresh(hash), data: grant, [TABLE_KEYS.ttl]: grant.expiresAt },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
          ],
        }),
      );
    },
    async refresh(hash, now = nowSeconds()) {
      const item = await get(keyOf.refresh(hash));
      if (!live(item, now)) return undefined;
      const grant = item.data as RefreshGrant;
      const family = await get(keyOf.family(grant.familyId));
      return {
        grant,
        used: item.usedAt !== undefined,
        familyRevoked: !live(family, now) || family.revokedAt !== undefined,
      };
    },
    async rotateRefresh(oldHash, newHash, now = nowSeconds()) {
      const item = await get(keyOf.refresh(oldHash));
      if (!live(item, now)) return { outcome: "unknown" };
      const previous = item.data as RefreshGrant;
      try {
        await ddb.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: tableName,
                  Key: keyOf.refresh(oldHash),
                  UpdateExpression: "SET usedAt = :now",
                  ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(usedAt)",
                  ExpressionAttributeValues: { ":now": now },
                },
              },
              {
                ConditionCheck: {
                  TableName: tableName,
                  Key: keyOf.family(previous.familyId),
                  ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(revokedAt)",
                },
              },
              {
                Put: {
                  TableName: tableName,
                  Item: { ...keyOf.refresh(newHash), data: previous, [TABLE_KEYS.ttl]: previous.expiresAt },
                  ConditionExpression: "attribute_not_exists(pk)",
                },
              },
            ],
          }),
        );
        return { outcome: "rotated", previous };
      } catch (error) {
        const failed = failedConditions(error);
        if (failed.length === 0) throw error;
        if (failed.includes(0)) {
          await revokeFamily(previous.familyId, now);
          return { outcome: "reused" };
        }
        return { outcome: "revoked" };
      }
    },
    revokeFamily,

    async listAccess() {
      return (await queryKind(ddb, tableName, KINDS.access)).map(toMapping);
    },
    async access(subjects) {
      const items = await batchGet(ddb, tableName, [...new Set(subjects)].map(keyOf.access));
      return items.map(toMapping).sort((a, b) => (a.subject < b.subject ? -1 : 1));
    },
    async putAccess(subject, serverIds, tools = {}) {
      const mapping = accessMapping(subject, serverIds, tools);
      await put({ ...keyOf.access(subject), kind: KINDS.access, kindSort: subject, ...mapping });
      return mapping;
    },
    async deleteAccess(subject) {
      const { Attributes } = await ddb.send(
        new DeleteCommand({ TableName: tableName, Key: keyOf.access(subject), ReturnValues: "ALL_OLD" }),
      );
      return Attributes !== undefined;
    },
  };
}

function toMapping(item: Item): AccessMapping {
  const ids = item.serverIds;
  return {
    subject: String(item.subject) as AccessSubject,
    // A damaged scope fails closed: never wider than what was stored.
    serverIds:
      ids === null
        ? null
        : Array.isArray(ids)
          ? ids.filter((id): id is string => typeof id === "string")
          : [],
    ...storedToolScope(item),
    updatedAt: String(item.updatedAt ?? ""),
  };
}

/** A mapping as stored now: empty tool sets and no policy left out. */
export function accessMapping(
  subject: AccessSubject,
  serverIds: string[] | null,
  tools: AccessTools,
): AccessMapping {
  return {
    subject,
    serverIds,
    ...(tools.toolsets?.length ? { toolsets: tools.toolsets } : {}),
    ...(tools.toolPolicy ? { toolPolicy: tools.toolPolicy } : {}),
    updatedAt: new Date().toISOString(),
  };
}
