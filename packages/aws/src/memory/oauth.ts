import {
  type AccessMapping,
  type AuthorizationCodeRecord,
  type AuthorizationTransaction,
  accessMapping,
  CLIENT_IDLE_SECONDS,
  CLIENT_UNUSED_SECONDS,
  clientExpiry,
  nowSeconds,
  type OAuthClientRecord,
  type OAuthStore,
  type RefreshGrant,
} from "../oauth";
import { copy } from "./tables";

/** The OAuth store in memory, with the table's semantics (expiry, single use, family revocation). */
export function createMemoryOAuthStore(): OAuthStore {
  const clients = new Map<string, { client: OAuthClientRecord; expiresAt: number }>();
  const transactions = new Map<string, AuthorizationTransaction>();
  const codes = new Map<string, { code: AuthorizationCodeRecord; used: boolean }>();
  const refreshTokens = new Map<string, { grant: RefreshGrant; used: boolean }>();
  const families = new Map<string, { expiresAt: number; revoked: boolean }>();
  const mappings = new Map<string, AccessMapping>();
  const familyLive = (id: string, now: number) => {
    const family = families.get(id);
    return family !== undefined && family.expiresAt > now && !family.revoked;
  };
  const revokeFamily = async (familyId: string) => {
    const family = families.get(familyId);
    if (family) family.revoked = true;
  };

  return {
    async saveClient(client, expiresAt = nowSeconds() + CLIENT_UNUSED_SECONDS) {
      clients.set(client.clientId, { client: copy(client), expiresAt });
    },
    async client(clientId, now = nowSeconds()) {
      const found = clients.get(clientId);
      return found && clientExpiry(found.client, found.expiresAt) > now ? copy(found.client) : undefined;
    },
    async clientUsed(clientId, now = nowSeconds()) {
      const found = clients.get(clientId);
      if (found && found.expiresAt > now) found.expiresAt = now + CLIENT_IDLE_SECONDS;
    },

    async saveTransaction(hash, transaction) {
      transactions.set(hash, copy(transaction));
    },
    async transaction(hash, now = nowSeconds()) {
      const found = transactions.get(hash);
      return found && found.expiresAt > now ? copy(found) : undefined;
    },
    async takeTransaction(hash, now = nowSeconds()) {
      const found = transactions.get(hash);
      transactions.delete(hash);
      return found && found.expiresAt > now ? found : undefined;
    },

    async saveCode(hash, code) {
      codes.set(hash, { code: copy(code), used: false });
    },
    async consumeCode(hash, now = nowSeconds()) {
      const found = codes.get(hash);
      if (!found || found.code.expiresAt <= now) return undefined;
      const firstUse = !found.used;
      found.used = true;
      return { code: copy(found.code), firstUse };
    },

    async issueRefresh(hash, grant) {
      if (families.has(grant.familyId) || refreshTokens.has(hash)) throw new Error("already issued");
      families.set(grant.familyId, { expiresAt: grant.expiresAt, revoked: false });
      refreshTokens.set(hash, { grant: copy(grant), used: false });
    },
    async refresh(hash, now = nowSeconds()) {
      const found = refreshTokens.get(hash);
      if (!found || found.grant.expiresAt <= now) return undefined;
      return {
        grant: copy(found.grant),
        used: found.used,
        familyRevoked: !familyLive(found.grant.familyId, now),
      };
    },
    async rotateRefresh(oldHash, newHash, now = nowSeconds()) {
      const found = refreshTokens.get(oldHash);
      if (!found || found.grant.expiresAt <= now) return { outcome: "unknown" };
      if (found.used) {
        await revokeFamily(found.grant.familyId);
        return { outcome: "reused" };
      }
      if (!familyLive(found.grant.familyId, now)) return { outcome: "revoked" };
      found.used = true;
      refreshTokens.set(newHash, { grant: copy(found.grant), used: false });
      return { outcome: "rotated", previous: copy(found.grant) };
    },
    revokeFamily,

    async listAccess() {
      return [...mappings.values()].map(copy).sort((a, b) => (a.subject < b.subject ? -1 : 1));
    },
    async access(subjects) {
      return [...new Set(subjects)]
        .flatMap((subject) => mappings.get(subject) ?? [])
        .map(copy)
        .sort((a, b) => (a.subject < b.subject ? -1 : 1));
    },
    async putAccess(subject, serverIds, tools = {}) {
      const mapping: AccessMapping = accessMapping(subject, serverIds, tools);
      mappings.set(subject, copy(mapping));
      return mapping;
    },
    async deleteAccess(subject) {
      return mappings.delete(subject);
    },
  };
}
