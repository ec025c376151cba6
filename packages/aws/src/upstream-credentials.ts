/**
 * The gateway's credentials as an OAuth client of the upstreams it fronts: per (server, subject) one
 * item holding the access and refresh tokens and the client registration, sealed (KMS envelope)
 * under an encryption context naming both — and the authorizations under way (single-use, short-lived,
 * keyed by the SHA-256 of their `state`, the PKCE verifier sealed). Nothing secret in the clear.
 */
import { createHash } from "node:crypto";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { conditionalWrite, deleteAll, isConditionFailure, queryKind } from "./dynamo";
import { live, nowSeconds } from "./oauth";
import type { SealContext, SealedValue, Sealer } from "./sealing";
import { ownedKind } from "./servers";
import { TABLE_KEYS } from "./table";

/** The OAuth client the gateway is at an upstream's authorization server. */
export interface UpstreamClient {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method?: string;
}

/** Where a credential came from: the AS (its metadata, for refreshing), the client, the resource. */
export interface UpstreamGrantOrigin {
  authorizationServer: string;
  metadata?: Record<string, unknown>;
  client: UpstreamClient;
  resource?: string;
}

/** An upstream credential, opened. */
export interface UpstreamCredential extends UpstreamGrantOrigin {
  accessToken: string;
  refreshToken?: string;
  scope?: string;
  /** When the access token expires (ISO); absent when the AS did not say. */
  expiresAt?: string;
}

/** An authorization under way: what the callback needs to finish it. */
export interface PendingUpstreamAuthorization extends UpstreamGrantOrigin {
  serverId: string;
  subject: string;
  codeVerifier: string;
  redirectUri: string;
  /** Epoch seconds after which it is refused. */
  expiresAt: number;
  /**
   * A caller's own authorization (`per_user`): who must sign in to open its link — `user:<sub>`,
   * `group:<name>` (a member) or `admin`. Absent for the shared connection (its URL is the admin's).
   */
  opener?: string;
  /** Where the person is sent once the link is opened by its opener: the upstream's authorization URL. */
  authorizationUrl?: string;
}

/** What is known of a held credential without opening it: whose, until when, since when. */
export interface HeldCredentialInfo {
  subject: string;
  /** When its access token expires (ISO); null when the AS did not say. */
  expiresAt: string | null;
  updatedAt: string;
}

export interface UpstreamCredentialStore {
  /**
   * Writes the credential (sealed); any refresh claim on it ends. `replace`: only over one still held
   * (a refresh finishing after the credential was deleted must not bring it back); false when none was.
   */
  put(
    serverId: string,
    subject: string,
    credential: UpstreamCredential,
    options?: { replace?: boolean },
  ): Promise<boolean>;
  /** The credential opened; undefined when there is none. Throws SealError when it cannot be opened. */
  get(serverId: string, subject: string): Promise<UpstreamCredential | undefined>;
  /** Every credential held for the server, newest first, none opened (no KMS call). */
  held(serverId: string): Promise<HeldCredentialInfo[]>;
  /** Deletes one subject's credential of the server; true when there was one. */
  remove(serverId: string, subject: string): Promise<boolean>;
  /** Deletes every credential of the server (all subjects) and its pending authorizations' results. */
  removeAll(serverId: string): Promise<number>;
  /**
   * Claims the right to refresh a credential for `leaseMs`: true for one claimant at a time (a rotated
   * refresh token spent twice would revoke its family at the AS). A put ends the claim.
   */
  claimRefresh(serverId: string, subject: string, leaseMs: number): Promise<boolean>;
  /** Ends a refresh claim without a put (the claimant found the credential refreshed already). */
  releaseRefresh(serverId: string, subject: string): Promise<void>;
  /** Records an authorization under way, found again by its `state`. */
  begin(state: string, pending: PendingUpstreamAuthorization): Promise<void>;
  /** Whether the authorization under way for `state` is still there to open (not taken, not opened). */
  isPending(state: string): Promise<boolean>;
  /**
   * The authorization under way for `state`, read without using it (whether its link was opened
   * already too); undefined if none or expired.
   */
  peek(state: string): Promise<{ pending: PendingUpstreamAuthorization; opened: boolean } | undefined>;
  /**
   * Marks the link of a gated authorization (one with an `opener`) opened, by the browser holding the
   * secret whose hash is `holderHash`: once only (false when already opened, gone or expired).
   */
  open(state: string, holderHash: string): Promise<boolean>;
  /**
   * The authorization under way for `state`, removed as it is read (single use); undefined if none or
   * expired. A gated one is taken only with the hash of the secret of the browser that opened its link
   * (`holderHash`); without it, it stays.
   */
  take(state: string, holderHash?: string): Promise<PendingUpstreamAuthorization | undefined>;
}

/** The context a (server, subject) credential is sealed under. */
export function upstreamCredentialContext(serverId: string, subject: string): SealContext {
  return { "mcpgw:server": serverId, "mcpgw:subject": subject, "mcpgw:field": "upstream-oauth" };
}

/** The context of an authorization under way (bound to its state's hash). */
export function pendingAuthorizationContext(stateHash: string): SealContext {
  return { "mcpgw:upstream-oauth-state": stateHash };
}

export function hashState(state: string): string {
  return createHash("sha256").update(state).digest("base64url");
}

export const upstreamKeys = {
  credential: (serverId: string, subject: string) => ({ pk: `UPSTREAMCRED#${serverId}`, sk: subject }),
  pending: (stateHash: string) => ({ pk: `UPSTREAMAUTH#${stateHash}`, sk: "PENDING" }),
};

export function createUpstreamCredentialStore(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  sealer: Sealer,
): UpstreamCredentialStore {
  const credentialItems = async (serverId: string) =>
    (await queryKind(ddb, tableName, ownedKind(serverId))).filter((item) =>
      String(item.pk).startsWith("UPSTREAMCRED#"),
    );
  return {
    async put(serverId, subject, credential, options = {}) {
      const sealed = await sealer.seal(credential, upstreamCredentialContext(serverId, subject));
      const put = new PutCommand({
        TableName: tableName,
        Item: {
          ...upstreamKeys.credential(serverId, subject),
          // Owned by the server: its delete removes it (with the rest it owns).
          [TABLE_KEYS.kind]: ownedKind(serverId),
          [TABLE_KEYS.kindSort]: `UPSTREAMCRED#${subject}`,
          serverId,
          subject,
          credentialExpiresAt: credential.expiresAt ?? null,
          updatedAt: new Date().toISOString(),
          sealed,
        },
        ...(options.replace ? { ConditionExpression: "attribute_exists(pk)" } : {}),
      });
      // Unconditional unless `replace`: then false when no credential was held.
      return conditionalWrite(() => ddb.send(put));
    },

    async get(serverId, subject) {
      const { Item } = await ddb.send(
        new GetCommand({
          TableName: tableName,
          Key: upstreamKeys.credential(serverId, subject),
          ConsistentRead: true,
        }),
      );
      if (!Item) return undefined;
      return sealer.open<UpstreamCredential>(
        Item.sealed as SealedValue,
        upstreamCredentialContext(serverId, subject),
      );
    },

    async held(serverId) {
      return (await credentialItems(serverId))
        .map((item) => ({
          subject: String(item.subject),
          expiresAt: (item.credentialExpiresAt as string | null | undefined) ?? null,
          updatedAt: String(item.updatedAt),
        }))
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    },

    async remove(serverId, subject) {
      const { Attributes } = await ddb.send(
        new DeleteCommand({
          TableName: tableName,
          Key: upstreamKeys.credential(serverId, subject),
          ReturnValues: "ALL_OLD",
        }),
      );
      return Attributes !== undefined;
    },

    async claimRefresh(serverId, subject, leaseMs) {
      const now = Date.now();
      return conditionalWrite(() =>
        ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: upstreamKeys.credential(serverId, subject),
            UpdateExpression: "SET refreshLeaseUntil = :until",
            ConditionExpression:
              "attribute_exists(pk) AND (attribute_not_exists(refreshLeaseUntil) OR refreshLeaseUntil < :now)",
            ExpressionAttributeValues: { ":until": now + leaseMs, ":now": now },
          }),
        ),
      );
    },

    async releaseRefresh(serverId, subject) {
      // Nothing to release when the credential is gone.
      await conditionalWrite(() =>
        ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: upstreamKeys.credential(serverId, subject),
            UpdateExpression: "REMOVE refreshLeaseUntil",
            ConditionExpression: "attribute_exists(pk)",
          }),
        ),
      );
    },

    async removeAll(serverId) {
      const items = await credentialItems(serverId);
      await deleteAll(
        ddb,
        tableName,
        items.map((item) => ({ pk: item.pk, sk: item.sk })),
      );
      return items.length;
    },

    async begin(state, pending) {
      const hash = hashState(state);
      const sealed = await sealer.seal(pending, pendingAuthorizationContext(hash));
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...upstreamKeys.pending(hash),
            serverId: pending.serverId,
            [TABLE_KEYS.ttl]: pending.expiresAt,
            ...(pending.opener ? { gated: true } : {}),
            sealed,
          },
        }),
      );
    },

    async isPending(state) {
      const { Item } = await ddb.send(
        new GetCommand({
          TableName: tableName,
          Key: upstreamKeys.pending(hashState(state)),
          ProjectionExpression: "pk, holder, #ttl",
          ExpressionAttributeNames: { "#ttl": TABLE_KEYS.ttl },
          ConsistentRead: true,
        }),
      );
      return live(Item, nowSeconds()) && Item.holder === undefined;
    },

    async peek(state) {
      const hash = hashState(state);
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: upstreamKeys.pending(hash), ConsistentRead: true }),
      );
      if (!live(Item, nowSeconds())) return undefined;
      const pending = await sealer.open<PendingUpstreamAuthorization>(
        Item.sealed as SealedValue,
        pendingAuthorizationContext(hash),
      );
      return { pending, opened: Item.holder !== undefined };
    },

    async open(state, holderHash) {
      return conditionalWrite(() =>
        ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: upstreamKeys.pending(hashState(state)),
            UpdateExpression: "SET holder = :holder",
            ConditionExpression:
              "attribute_exists(pk) AND gated = :true AND attribute_not_exists(holder) AND #ttl > :now",
            ExpressionAttributeNames: { "#ttl": TABLE_KEYS.ttl },
            ExpressionAttributeValues: { ":holder": holderHash, ":true": true, ":now": nowSeconds() },
          }),
        ),
      );
    },

    async take(state, holderHash) {
      const hash = hashState(state);
      let Attributes: Record<string, unknown> | undefined;
      try {
        // A gated authorization only for the browser that opened its link: anyone else leaves it be.
        ({ Attributes } = await ddb.send(
          new DeleteCommand({
            TableName: tableName,
            Key: upstreamKeys.pending(hash),
            ConditionExpression: "attribute_not_exists(gated) OR holder = :holder",
            ExpressionAttributeValues: { ":holder": holderHash ?? "" },
            ReturnValues: "ALL_OLD",
          }),
        ));
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
      if (!live(Attributes, nowSeconds())) return undefined;
      const pending = await sealer.open<PendingUpstreamAuthorization>(
        Attributes.sealed as SealedValue,
        pendingAuthorizationContext(hash),
      );
      return pending.expiresAt * 1000 > Date.now() ? pending : undefined;
    },
  };
}
