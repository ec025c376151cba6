import type { SealedValue, Sealer } from "../sealing";
import {
  hashState,
  type PendingUpstreamAuthorization,
  pendingAuthorizationContext,
  type UpstreamCredential,
  type UpstreamCredentialStore,
  upstreamCredentialContext,
} from "../upstream-credentials";
import type { MemoryTables } from "./tables";

/** Upstream credentials in memory, sealed as in the table (so a wrong context fails the same way). */
export function createMemoryUpstreamCredentialStore(
  tables: MemoryTables,
  sealer: Sealer,
): UpstreamCredentialStore {
  const pending = new Map<
    string,
    { sealed: SealedValue; expiresAt: number; gated: boolean; holder?: string }
  >();
  const live = (hash: string) => {
    const item = pending.get(hash);
    return item && item.expiresAt * 1000 > Date.now() ? item : undefined;
  };
  const key = (serverId: string, subject: string) => `${serverId}\u0000${subject}`;
  return {
    async put(serverId, subject, credential, options = {}) {
      const sealed = await sealer.seal(credential, upstreamCredentialContext(serverId, subject));
      if (options.replace && !tables.upstreamCredentials.has(key(serverId, subject))) return false;
      tables.upstreamCredentials.set(key(serverId, subject), {
        serverId,
        subject,
        expiresAt: credential.expiresAt ?? null,
        updatedAt: new Date().toISOString(),
        sealed,
      });
      return true;
    },
    async get(serverId, subject) {
      const item = tables.upstreamCredentials.get(key(serverId, subject));
      return item
        ? sealer.open<UpstreamCredential>(item.sealed, upstreamCredentialContext(serverId, subject))
        : undefined;
    },
    async held(serverId) {
      return [...tables.upstreamCredentials.values()]
        .filter((item) => item.serverId === serverId)
        .map(({ subject, expiresAt, updatedAt }) => ({ subject, expiresAt, updatedAt }))
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    },
    async remove(serverId, subject) {
      return tables.upstreamCredentials.delete(key(serverId, subject));
    },
    async claimRefresh(serverId, subject, leaseMs) {
      const item = tables.upstreamCredentials.get(key(serverId, subject));
      const now = Date.now();
      if (!item || (item.refreshLeaseUntil ?? 0) >= now) return false;
      item.refreshLeaseUntil = now + leaseMs;
      return true;
    },
    async releaseRefresh(serverId, subject) {
      const item = tables.upstreamCredentials.get(key(serverId, subject));
      if (item) delete item.refreshLeaseUntil;
    },
    async removeAll(serverId) {
      let count = 0;
      for (const [k, item] of tables.upstreamCredentials)
        if (item.serverId === serverId) count += Number(tables.upstreamCredentials.delete(k));
      return count;
    },
    async begin(state, value) {
      const hash = hashState(state);
      const sealed = await sealer.seal(value, pendingAuthorizationContext(hash));
      pending.set(hash, { sealed, expiresAt: value.expiresAt, gated: value.opener !== undefined });
    },
    async isPending(state) {
      const item = live(hashState(state));
      return item !== undefined && item.holder === undefined;
    },
    async peek(state) {
      const hash = hashState(state);
      const item = live(hash);
      if (!item) return undefined;
      const value = await sealer.open<PendingUpstreamAuthorization>(
        item.sealed,
        pendingAuthorizationContext(hash),
      );
      return { pending: value, opened: item.holder !== undefined };
    },
    async open(state, holderHash) {
      const item = live(hashState(state));
      if (!item?.gated || item.holder !== undefined) return false;
      item.holder = holderHash;
      return true;
    },
    async take(state, holderHash) {
      const hash = hashState(state);
      const item = pending.get(hash);
      if (!item || (item.gated && (item.holder === undefined || item.holder !== holderHash)))
        return undefined;
      pending.delete(hash);
      if (item.expiresAt * 1000 <= Date.now()) return undefined;
      return sealer.open<PendingUpstreamAuthorization>(item.sealed, pendingAuthorizationContext(hash));
    },
  };
}
