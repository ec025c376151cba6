import { SealError, type Store } from "@mcpgw/aws";
import { type Logger, SHARED_SUBJECT, type UpstreamClientCredentials } from "@mcpgw/core";
import {
  describeFailure,
  type HeldCredential,
  needsNewGrant,
  type ProbeOptions,
  type ProbeResult,
  requestClientCredentialsToken,
  scrubSecrets,
  type TargetSource,
  withBearer,
} from "@mcpgw/upstream";
import { type AttemptDeps, attemptConnection } from "./attempt";

/**
 * An attempt on a server the gateway reaches as a machine client (`auth.type: client_credentials`):
 * the held token (under SHARED_SUBJECT, like a shared authorization's), or a new one by the grant when
 * there is none, it expires within the margin, or the upstream answers 401 — stored sealed, and the
 * attempt made a full probe so the status shows the new expiry. A refused grant → failed /
 * access_denied with `authorization: "refused"`: no authorize step exists here, the fix is the
 * client's id or secret (so `required`, which points an admin at one, would mislead).
 */
export async function attemptWithClientCredentials(
  deps: AttemptDeps & { store: Store; logger: Logger },
  serverId: string,
  target: Extract<TargetSource, { transport: "http" }>,
  auth: UpstreamClientCredentials,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const at = new Date().toISOString();
  const refused = (error: string, credential?: HeldCredential): ProbeResult => ({
    ok: false,
    at,
    reason: "access_denied",
    error,
    authorization: "refused",
    credentialExpiresAt: credential?.expiresAt ?? null,
  });
  let credential = await deps.store.upstreamCredentials
    .get(serverId, SHARED_SUBJECT)
    .catch((error: unknown) => {
      if (error instanceof SealError) return undefined; // a new grant replaces it
      throw error;
    });
  let granted = false;
  const grant = async (): Promise<HeldCredential | string> => {
    try {
      const fresh = await requestClientCredentialsToken({ url: target.url, auth, fetch: deps.fetch });
      await deps.store.upstreamCredentials.put(serverId, SHARED_SUBJECT, fresh);
      granted = true;
      deps.logger.info("upstream token obtained (client_credentials)", {
        serverId,
        expiresAt: fresh.expiresAt ?? null,
      });
      return fresh;
    } catch (error) {
      const text = scrubSecrets(describeFailure(error), [auth.clientSecret]);
      deps.logger.warn("upstream client_credentials grant failed", { serverId, error: text });
      return `the upstream's authorization server refused the client_credentials grant for client '${auth.clientId}' (${text}); correct auth.clientId / auth.clientSecret`;
    }
  };
  if (needsNewGrant(credential)) {
    const fresh = await grant();
    if (typeof fresh === "string") return refused(fresh, credential);
    credential = fresh;
  }
  const held = credential as HeldCredential;
  const attempt = (token: HeldCredential) =>
    attemptConnection(withBearer(target, token.accessToken), deps, granted ? undefined : listToolsIf);
  let result = await attempt(held);
  let used = held;
  if (!result.ok && result.reason === "access_denied" && !granted) {
    const fresh = await grant();
    if (typeof fresh === "string") return refused(fresh, held);
    used = fresh;
    result = await attempt(fresh);
  }
  if (!result.ok && result.reason === "access_denied")
    return refused(
      `the upstream refused the token the client_credentials grant gave (${result.error})`,
      used,
    );
  return { ...result, authorization: "authorized", credentialExpiresAt: used.expiresAt ?? null };
}
