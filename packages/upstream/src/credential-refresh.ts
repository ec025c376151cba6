/**
 * Refreshing a held upstream credential, one refresher at a time: a rotated refresh token spent twice
 * revokes its whole family at most authorization servers, so whoever refreshes (a worker's check, or a
 * gateway instance whose caller's token was refused) first claims a short lease on the credential and
 * checks it still holds what it means to refresh; a loser waits for the winner's new tokens instead of
 * spending the same refresh token.
 */
import type { Logger } from "@mcpgw/core";
import { describeFailure, scrubSecrets } from "./classify-failure";
import { type HeldCredential, refreshUpstreamCredential } from "./oauth-client";

/** Where credentials are kept: the store's upstream-credential part, as far as a refresh needs it. */
export interface CredentialKeeper {
  get(serverId: string, subject: string): Promise<HeldCredential | undefined>;
  put(
    serverId: string,
    subject: string,
    credential: HeldCredential,
    options?: { replace?: boolean },
  ): Promise<boolean>;
  claimRefresh(serverId: string, subject: string, leaseMs: number): Promise<boolean>;
  releaseRefresh(serverId: string, subject: string): Promise<void>;
}

/** How long one refresher holds a credential's refresh to itself. */
const REFRESH_LEASE_MS = 30_000;
/** How long a refresher that lost the claim waits for the winner's new tokens. */
const LEASE_WAIT_MS = 5_000;
/** The most a token request may take: well inside the lease, so no second refresher starts meanwhile. */
const REFRESH_TIMEOUT_MS = 10_000;

/** `fetchFn` with every request bounded by `ms` (and by the caller's own signal, if any). */
export function boundedFetch(fetchFn: typeof fetch, ms: number): typeof fetch {
  return (input, init) => {
    const timeout = AbortSignal.timeout(ms);
    return fetchFn(input, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
    });
  };
}

/** A new access token for `held`, written back (sealed by the keeper); or why there is none. */
export async function refreshHeldCredential(
  deps: { credentials: CredentialKeeper; fetch: typeof fetch; logger: Logger },
  serverId: string,
  subject: string,
  held: HeldCredential,
): Promise<HeldCredential | string> {
  const { credentials, logger } = deps;
  if (!(await credentials.claimRefresh(serverId, subject, REFRESH_LEASE_MS)))
    return (await refreshedElsewhere(credentials, serverId, subject, held)) ?? "another refresh is under way";
  // Claimed; but a refresh that ended just before (its put ends its claim) has spent `held`'s token.
  const current = await credentials.get(serverId, subject);
  if (current && current.accessToken !== held.accessToken) {
    await credentials.releaseRefresh(serverId, subject);
    return current;
  }
  try {
    const fresh = await refreshUpstreamCredential(held, boundedFetch(deps.fetch, REFRESH_TIMEOUT_MS));
    // Only over the credential still held: one deleted meanwhile (key revoked, auth changed) stays gone.
    if (!(await credentials.put(serverId, subject, fresh, { replace: true })))
      return "the credential was deleted while it was being refreshed";
    logger.info("upstream token refreshed", { serverId, subject, expiresAt: fresh.expiresAt ?? null });
    return fresh;
  } catch (error) {
    const text = scrubSecrets(describeFailure(error), [
      held.accessToken,
      held.refreshToken ?? "",
      held.client.client_secret ?? "",
    ]);
    logger.warn("upstream token refresh failed", { serverId, subject, error: text });
    await credentials.releaseRefresh(serverId, subject).catch(() => undefined);
    return `the upstream's authorization server refused to refresh the token (${text})`;
  }
}

/** The credential another refresher wrote while this one waited (polled until LEASE_WAIT_MS). */
async function refreshedElsewhere(
  credentials: CredentialKeeper,
  serverId: string,
  subject: string,
  held: HeldCredential,
): Promise<HeldCredential | undefined> {
  const until = Date.now() + LEASE_WAIT_MS;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await credentials.get(serverId, subject).catch(() => undefined);
    if (now && now.accessToken !== held.accessToken) return now;
  }
  return undefined;
}
