import { SealError, type Store } from "@mcpgw/aws";
import { type Logger, SHARED_SUBJECT } from "@mcpgw/core";
import {
  expiresWithinMargin,
  type HeldCredential,
  needsRefresh,
  type ProbeOptions,
  type ProbeResult,
  refreshHeldCredential,
  type TargetSource,
  withBearer,
} from "@mcpgw/upstream";
import { type AttemptDeps, attemptConnection } from "./attempt";

type CredentialDeps = AttemptDeps & { store: Store; logger: Logger };

/** The admin's own connection to a per-user server (see the API's `credentialSubject`). */
const ADMIN_SUBJECT = "admin";
/** The most per-user credentials one check refreshes (the rest wait for the next check). */
const MAX_REFRESHES_PER_CHECK = 25;
/** The most per-user connections one check tries before it calls the server unauthorized. */
const MAX_SUBJECTS_TRIED = 3;

/** What an admin does about a server whose credential is missing or refused. */
export function authorizeHint(serverId: string, perUser = false): string {
  const admin = `POST /v1/servers/${serverId}/authorize and open the authorizationUrl it returns`;
  return perUser
    ? `each user authorizes their own connection when a call first needs it; to catalogue the tools, an admin authorizes theirs: ${admin}`
    : `authorize the gateway at the upstream: ${admin}`;
}

/**
 * An attempt on a server the gateway is an OAuth client of. `shared` mode: its stored credential,
 * refreshed first when it expires within the margin (or when the upstream answers 401), the bearer
 * added. `per_user` mode: every user's credential nearing expiry is refreshed, and the check runs with
 * the newest one that works (no user has authorized → required). No credential, a refresh refused, or a
 * 401 that a refresh does not cure → failed / access_denied with `authorization: "required"` — never a
 * silent expiry. A refresh writes the new tokens (sealed), one refresher at a time (a lease), and makes
 * the attempt a full probe, so the status shows the new expiry.
 */
export async function attemptWithCredential(
  deps: CredentialDeps,
  server: { id: string; perUser: boolean },
  target: Extract<TargetSource, { transport: "http" }>,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const at = new Date().toISOString();
  const required = (refused: Refused): ProbeResult => ({
    ok: false,
    at,
    reason: "access_denied",
    error: `${refused.reason}; ${authorizeHint(server.id, server.perUser)}`,
    authorization: "required",
    credentialExpiresAt: refused.expiresAt ?? null,
  });
  if (!server.perUser) {
    const outcome = await attemptAs(deps, server.id, SHARED_SUBJECT, target, listToolsIf);
    return "refused" in outcome ? required(outcome.refused) : outcome.result;
  }
  // The admin's own connection is checked first (it is what an admin authorized to catalogue the tools),
  // then the newest; the one checked is refreshed there, the others' refreshes happen here.
  const held = (await deps.store.upstreamCredentials.held(server.id)).sort(
    (a, b) => Number(b.subject === ADMIN_SUBJECT) - Number(a.subject === ADMIN_SUBJECT),
  );
  await refreshExpiring(
    deps,
    server.id,
    held.slice(1).filter((info) => expiresWithinMargin(info.expiresAt)),
  );
  let last: Refused = { reason: "no user has authorized the gateway at this upstream yet" };
  for (const { subject } of held.slice(0, MAX_SUBJECTS_TRIED)) {
    const outcome = await attemptAs(deps, server.id, subject, target, listToolsIf);
    if ("result" in outcome) return outcome.result;
    last = outcome.refused;
  }
  return required(last);
}

/** Why a credential cannot be used, and when it expires (when there is one to show). */
interface Refused {
  reason: string;
  expiresAt?: string | undefined;
}

/** One attempt with one subject's credential: the probe's result, or why that credential cannot be used. */
async function attemptAs(
  deps: CredentialDeps,
  serverId: string,
  subject: string,
  target: Extract<TargetSource, { transport: "http" }>,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<{ refused: Refused } | { result: ProbeResult }> {
  let credential: HeldCredential | undefined;
  try {
    credential = await deps.store.upstreamCredentials.get(serverId, subject);
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    return { refused: { reason: "the stored upstream credential cannot be opened" } };
  }
  if (!credential) return { refused: { reason: "the gateway holds no credential for this upstream" } };
  let refreshed = false;
  const renew = async (held: HeldCredential) => {
    const fresh = await refreshOne(deps, serverId, subject, held);
    if (typeof fresh !== "string") refreshed = true;
    return fresh;
  };
  if (needsRefresh(credential)) {
    const fresh = await renew(credential);
    if (typeof fresh === "string") return { refused: { reason: fresh, expiresAt: credential.expiresAt } };
    credential = fresh;
  }
  const attempt = (held: HeldCredential) =>
    attemptConnection(withBearer(target, held.accessToken), deps, refreshed ? undefined : listToolsIf);
  let result = await attempt(credential);
  if (!result.ok && result.reason === "access_denied" && !refreshed && credential.refreshToken) {
    const fresh = await renew(credential);
    if (typeof fresh === "string") return { refused: { reason: fresh, expiresAt: credential.expiresAt } };
    credential = fresh;
    result = await attempt(credential);
  }
  if (!result.ok && result.reason === "access_denied")
    return {
      refused: {
        reason: `the upstream refused the gateway's token (${result.error})`,
        expiresAt: credential.expiresAt,
      },
    };
  return {
    result: { ...result, authorization: "authorized", credentialExpiresAt: credential.expiresAt ?? null },
  };
}

/** Refreshes per-user credentials nearing expiry (bounded per check; a failure is that user's alone). */
async function refreshExpiring(
  deps: CredentialDeps,
  serverId: string,
  expiring: Array<{ subject: string }>,
): Promise<void> {
  for (const { subject } of expiring.slice(0, MAX_REFRESHES_PER_CHECK)) {
    const held = await deps.store.upstreamCredentials.get(serverId, subject).catch(() => undefined);
    if (held && needsRefresh(held)) await refreshOne(deps, serverId, subject, held);
  }
}

function refreshOne(deps: CredentialDeps, serverId: string, subject: string, held: HeldCredential) {
  return refreshHeldCredential(
    { credentials: deps.store.upstreamCredentials, fetch: deps.fetch, logger: deps.logger },
    serverId,
    subject,
    held,
  );
}
