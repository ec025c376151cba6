/**
 * The gateway as a machine client of an upstream (OAuth client_credentials grant): no user, no
 * authorize step. The token endpoint is the configured `tokenUrl`, else the one the upstream's 401
 * leads to (RFC 9728 → RFC 8414); the request names the PRM's `resource` (RFC 8707) when there is
 * one, and the client authenticates as the AS's metadata allows (the SDK's `client_secret_basic`, else
 * `_post`). There is no refresh token: a new token is simply the grant again.
 */
import type { UpstreamClientCredentials } from "@mcpgw/core";
import {
  type AuthorizationServerMetadata,
  fetchToken,
  type OAuthClientProvider,
} from "@modelcontextprotocol/client";
import {
  discoverFromChallenge,
  type HeldCredential,
  heldCredential,
  UpstreamAuthError,
} from "./oauth-client";

/** Obtain a new token when the held one expires within this margin. */
export const GRANT_MARGIN_MS = 2 * 60_000;

/** Whether a client_credentials token should be obtained again before use (missing, or expiring soon). */
export function needsNewGrant(credential: HeldCredential | undefined, now = Date.now()): boolean {
  if (!credential) return true;
  return credential.expiresAt !== undefined && Date.parse(credential.expiresAt) - now < GRANT_MARGIN_MS;
}

/**
 * A token by the client_credentials grant. The credential kept names the client by id only: its
 * secret stays in the server's config (sealed there), read again for every grant.
 */
export async function requestClientCredentialsToken(options: {
  url: string;
  auth: UpstreamClientCredentials;
  fetch: typeof fetch;
}): Promise<HeldCredential> {
  const { auth, fetch: fetchFn } = options;
  const { authorizationServer, metadata, resource } = auth.tokenUrl
    ? {
        authorizationServer: new URL(auth.tokenUrl).origin,
        metadata: { token_endpoint: auth.tokenUrl } as Partial<AuthorizationServerMetadata>,
        resource: undefined,
      }
    : await discoverTokenEndpoint(options.url, fetchFn);
  const client = { client_id: auth.clientId, client_secret: auth.clientSecret };
  const provider = {
    get redirectUrl() {
      return undefined;
    },
    clientMetadata: { redirect_uris: [], grant_types: ["client_credentials"] },
    clientInformation: () => client,
    prepareTokenRequest: (scope?: string) => {
      const params = new URLSearchParams({ grant_type: "client_credentials" });
      if (scope) params.set("scope", scope);
      return params;
    },
  } as unknown as OAuthClientProvider;
  const scope = auth.scopes?.join(" ");
  const tokens = await fetchToken(provider, authorizationServer, {
    metadata: metadata as AuthorizationServerMetadata,
    ...(resource ? { resource } : {}), // verbatim: a URL would add "/" to a pathless identifier
    ...(scope ? { scope } : {}),
    fetchFn,
  });
  return heldCredential(
    { ...tokens, refresh_token: undefined },
    {
      authorizationServer,
      ...(auth.tokenUrl ? {} : { metadata: metadata as Record<string, unknown> }),
      client: { client_id: auth.clientId },
      ...(resource ? { resource } : {}),
    },
  );
}

async function discoverTokenEndpoint(url: string, fetchFn: typeof fetch) {
  const { info } = await discoverFromChallenge(url, fetchFn);
  const metadata = info.authorizationServerMetadata;
  if (!metadata?.token_endpoint)
    throw new UpstreamAuthError(
      "the upstream's authorization server publishes no token endpoint: configure auth.tokenUrl",
    );
  return {
    authorizationServer: info.authorizationServerUrl,
    metadata,
    resource: info.resourceMetadata?.resource,
  };
}
