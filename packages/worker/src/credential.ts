import { SealError, type Store } from "@mcpgw/aws";
import { type Logger, SHARED_SUBJECT } from "@mcpgw/core";
import {
  describeFailure,
  type HeldCredential,
  needsRefresh,
  type ProbeOptions,
  type ProbeResult,
  refreshUpstreamCredential,
  scrubSecrets,
  type TargetSource,
  withBearer,
} from "@mcpgw/upstream";
import { type AttemptDeps, attemptConnection } from "./attempt";

/** What an admin does about a server whose credential is missing or refused. */
export function authorizeHint(serverId: string): string {
  return `authorize the gateway at the upstream: POST /v1/servers/${serverId}/authorize and open the authorizationUrl it returns`;
}

/**
 * An attempt on a server the gateway is an OAuth client of (`shared` mode): its stored credential,
 * refreshed first when it expires within the margin (or when the upstream answers 401), the bearer
 * added. No credential, a refresh refused, or a 401 that a refresh does not cure → failed /
 * access_denied with `authorization: "required"` — never a silent expiry. A refresh writes the new
 * tokens (sealed) and makes the attempt a full probe, so the status shows the new expiry.
 */
export async function attemptWithCredential(
  deps: AttemptDeps & { store: Store; logger: Logger },
  serverId: string,
  target: Extract<TargetSource, { transport: "http" }>,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const at = new Date().toISOString();
  const required = (error: string, credential?: HeldCredential): ProbeResult => ({
    ok: false,
    at,
    reason: "access_denied",
    error: `${error}; ${authorizeHint(serverId)}`,
    authorization: "required",
    credentialExpiresAt: credential?.expiresAt ?? null,
  });
  let credential: HeldCredential | undefined;
  try {
    credential = await deps.store.upstreamCredentials.get(serverId, SHARED_SUBJECT);
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    return required("the stored upstream credential cannot be opened");
  }
  if (!credential) return required("the gateway holds no credential for this upstream");
  let refreshed = false;
  const refresh = async (held: HeldCredential): Promise<HeldCredential | string> => {
    try {
      const fresh = await refreshUpstreamCredential(held, deps.fetch);
      await deps.store.upstreamCredentials.put(serverId, SHARED_SUBJECT, fresh);
      refreshed = true;
      deps.logger.info("upstream token refreshed", { serverId, expiresAt: fresh.expiresAt ?? null });
      return fresh;
    } catch (error) {
      const text = scrubSecrets(describeFailure(error), [
        held.accessToken,
        held.refreshToken ?? "",
        held.client.client_secret ?? "",
      ]);
      deps.logger.warn("upstream token refresh failed", { serverId, error: text });
      return `the upstream's authorization server refused to refresh the token (${text})`;
    }
  };
  if (needsRefresh(credential)) {
    const fresh = await refresh(credential);
    if (typeof fresh === "string") return required(fresh, credential);
    credential = fresh;
  }
  const attempt = (held: HeldCredential) =>
    attemptConnection(withBearer(target, held.accessToken), deps, refreshed ? undefined : listToolsIf);
  let result = await attempt(credential);
  if (!result.ok && result.reason === "access_denied" && !refreshed && credential.refreshToken) {
    const fresh = await refresh(credential);
    if (typeof fresh === "string") return required(fresh, credential);
    credential = fresh;
    result = await attempt(credential);
  }
  if (!result.ok && result.reason === "access_denied")
    return required(`the upstream refused the gateway's token (${result.error})`, credential);
  return { ...result, authorization: "authorized", credentialExpiresAt: credential.expiresAt ?? null };
}
