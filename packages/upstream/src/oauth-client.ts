/**
 * The gateway as an OAuth client of an upstream MCP server (authorization code + PKCE), on the SDK's
 * own auth helpers: discovery from the upstream's 401 (RFC 9728 → RFC 8414), client registration
 * (CIMD, else dynamic registration, else a configured client id), the authorization URL, the code
 * exchange and the refresh. Credentials are plain objects here; the store seals them.
 */
import type { UpstreamOAuth } from "@mcpgw/core";
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthTokens,
} from "@modelcontextprotocol/client";

/**
 * The SDK's auth helpers, loaded by the first call that needs them: a plane that only authorizes
 * upstreams (the admin function) does not load the MCP client at its cold start.
 */
let sdk: Promise<typeof import("./oauth-sdk")> | undefined;
const mcpClient = () => (sdk ??= import("./oauth-sdk"));

/** The client the gateway is at an upstream's AS (a DCR result may carry a secret). */
export interface OAuthClientInfo {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method?: string;
}

/** Where a grant comes from: the AS, its metadata, the client, the resource. */
export interface GrantOrigin {
  authorizationServer: string;
  metadata?: Record<string, unknown>;
  client: OAuthClientInfo;
  resource?: string;
}

/** Tokens the gateway holds for an upstream, with where they came from (to refresh them). */
export interface HeldCredential extends GrantOrigin {
  accessToken: string;
  refreshToken?: string;
  scope?: string;
  expiresAt?: string;
}

/** An authorization to hand to an admin: the URL, plus what the callback needs (kept sealed). */
export interface StartedAuthorization extends GrantOrigin {
  authorizationUrl: string;
  codeVerifier: string;
}

/** The upstream cannot be authorized as configured (no AS found, no way to register…). */
export class UpstreamAuthError extends Error {
  override readonly name = "UpstreamAuthError";
}

/**
 * The gateway's client metadata (what CIMD serves and DCR sends), with the `application_type` SEP-837
 * asks for, derived from the redirect URI as the SDK does (`web`; `native` for a loopback one).
 */
export async function gatewayClientMetadata(redirectUri: string, clientId?: string) {
  const { resolveClientMetadata } = await mcpClient();
  const metadata = {
    ...(clientId ? { client_id: clientId } : {}),
    client_name: "MCP Gateway",
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  const { application_type } = resolveClientMetadata({ clientMetadata: metadata, redirectUrl: redirectUri });
  return { ...metadata, ...(application_type ? { application_type } : {}) };
}

/** What an authorization of the gateway at an upstream needs, found once: the AS, its metadata, the client. */
export interface PreparedAuthorization extends GrantOrigin {
  metadata: Record<string, unknown>;
  /** The scope to ask for (absent: none named anywhere). */
  scope?: string;
}

/**
 * Discovers the upstream's authorization server from its 401 (an unauthenticated `initialize`) and
 * registers the gateway: everything an authorization URL needs but its `state` and PKCE pair, so it can
 * serve many authorizations (one per user, in `per_user` mode) without registering again.
 */
export async function prepareUpstreamAuthorization(options: {
  url: string;
  auth: UpstreamOAuth;
  redirectUri: string;
  /** The gateway's CIMD URL (https only); used when the AS supports client metadata documents. */
  clientMetadataUrl?: string | undefined;
  fetch: typeof fetch;
}): Promise<PreparedAuthorization> {
  const { url, auth, fetch: fetchFn } = options;
  const { info, challengedScope } = await discoverFromChallenge(url, fetchFn);
  const metadata =
    info.authorizationServerMetadata ??
    (info.resourceMetadata ? undefined : legacyDefaultEndpoints(info.authorizationServerUrl));
  if (!metadata) throw new UpstreamAuthError("the upstream's authorization server publishes no metadata");
  const resource = info.resourceMetadata?.resource;
  const client = await chooseClient(info.authorizationServerUrl, metadata, { ...options, fetch: fetchFn });
  const scopes =
    auth.scopes?.join(" ") ??
    challengedScope ??
    info.resourceMetadata?.scopes_supported?.join(" ") ??
    undefined;
  const scope =
    metadata.scopes_supported?.includes("offline_access") && !scopes?.split(" ").includes("offline_access")
      ? [scopes, "offline_access"].filter(Boolean).join(" ")
      : scopes;
  return {
    authorizationServer: info.authorizationServerUrl,
    metadata: metadata as Record<string, unknown>,
    client,
    ...(resource ? { resource } : {}),
    ...(scope ? { scope } : {}),
  };
}

/** One authorization from a prepared one: its URL (PKCE S256, `state`, the PRM `resource`) and verifier. */
export async function authorizationFrom(
  prepared: PreparedAuthorization,
  redirectUri: string,
  state: string,
): Promise<StartedAuthorization> {
  const { scope, ...origin } = prepared;
  const { startAuthorization } = await mcpClient();
  const { authorizationUrl, codeVerifier } = await startAuthorization(prepared.authorizationServer, {
    metadata: prepared.metadata as AuthorizationServerMetadata,
    clientInformation: prepared.client as OAuthClientInformationMixed,
    redirectUrl: redirectUri,
    state,
    ...(scope ? { scope } : {}),
    // The identifier exactly as the metadata has it (a URL object would add "/" to a pathless one).
    ...(prepared.resource ? { resource: prepared.resource } : {}),
  });
  return { authorizationUrl: authorizationUrl.href, codeVerifier, ...origin };
}

/** Discovers, registers and builds one authorization URL (see {@link prepareUpstreamAuthorization}). */
export async function startUpstreamAuthorization(options: {
  url: string;
  auth: UpstreamOAuth;
  redirectUri: string;
  state: string;
  /** The gateway's CIMD URL (https only); used when the AS supports client metadata documents. */
  clientMetadataUrl?: string | undefined;
  fetch: typeof fetch;
}): Promise<StartedAuthorization> {
  return authorizationFrom(await prepareUpstreamAuthorization(options), options.redirectUri, options.state);
}

/**
 * A 2025-03-26 server with no metadata at all (neither protected-resource nor authorization-server):
 * that revision's default endpoints at the server's origin — `/authorize`, `/token`, `/register`.
 */
function legacyDefaultEndpoints(base: string): AuthorizationServerMetadata {
  const at = (path: string) => new URL(path, base).href;
  return {
    issuer: new URL(base).origin,
    authorization_endpoint: at("/authorize"),
    token_endpoint: at("/token"),
    registration_endpoint: at("/register"),
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
  };
}

/**
 * The upstream's authorization server, found from its 401 to an unauthenticated `initialize` (RFC 9728
 * protected-resource metadata → RFC 8414 metadata), and the scope the challenge names. Protected-resource
 * metadata about another resource than `url` is refused (RFC 9728 §3.3): its authorization server is
 * not this server's.
 */
export async function discoverFromChallenge(url: string, fetchFn: typeof fetch) {
  const { checkResourceAllowed, discoverOAuthServerInfo, extractWWWAuthenticateParams } = await mcpClient();
  const challenge = await fetchFn(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "mcp-gateway", version: "1" },
      },
    }),
    redirect: "manual",
  });
  await challenge.body?.cancel().catch(() => undefined);
  const { resourceMetadataUrl, scope: challengedScope } =
    challenge.status === 401 ? extractWWWAuthenticateParams(challenge) : {};
  const info = await discoverOAuthServerInfo(url, {
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    fetchFn,
  });
  const resource = info.resourceMetadata?.resource;
  if (
    resource !== undefined &&
    !checkResourceAllowed({ requestedResource: url, configuredResource: resource })
  )
    throw new UpstreamAuthError(
      `the upstream's protected resource metadata is for ${resource}, not for ${url}: refusing to authorize there`,
    );
  return { info, challengedScope };
}

async function chooseClient(
  authorizationServer: string,
  metadata: AuthorizationServerMetadata,
  options: {
    auth: UpstreamOAuth;
    redirectUri: string;
    clientMetadataUrl?: string | undefined;
    fetch: typeof fetch;
  },
): Promise<OAuthClientInfo> {
  if (options.auth.clientId)
    return {
      client_id: options.auth.clientId,
      // A confidential client: the SDK authenticates it as the AS's metadata allows (basic, else post).
      ...(options.auth.clientSecret ? { client_secret: options.auth.clientSecret } : {}),
    };
  if (
    options.clientMetadataUrl?.startsWith("https://") &&
    (metadata as { client_id_metadata_document_supported?: boolean })
      .client_id_metadata_document_supported === true
  )
    return { client_id: options.clientMetadataUrl };
  if (metadata.registration_endpoint) {
    const { registerClient } = await mcpClient();
    const registered = await registerClient(authorizationServer, {
      metadata,
      clientMetadata: (await gatewayClientMetadata(options.redirectUri)) as never,
      fetchFn: options.fetch,
    });
    return {
      client_id: registered.client_id,
      ...(registered.client_secret ? { client_secret: registered.client_secret } : {}),
      ...(registered.token_endpoint_auth_method
        ? { token_endpoint_auth_method: registered.token_endpoint_auth_method }
        : {}),
    };
  }
  throw new UpstreamAuthError(
    "the upstream's authorization server supports neither client metadata documents nor dynamic registration: configure auth.clientId",
  );
}

/** Exchanges the callback's code (checking `iss` per RFC 9207) for the credential to keep. */
export async function finishUpstreamAuthorization(
  origin: GrantOrigin & { codeVerifier: string; redirectUri: string },
  callback: { code: string; iss?: string | undefined },
  fetchFn: typeof fetch,
): Promise<HeldCredential> {
  const { exchangeAuthorization } = await mcpClient();
  const tokens = await exchangeAuthorization(origin.authorizationServer, {
    metadata: origin.metadata as AuthorizationServerMetadata,
    clientInformation: origin.client as OAuthClientInformationMixed,
    authorizationCode: callback.code,
    ...(callback.iss ? { iss: callback.iss } : {}),
    codeVerifier: origin.codeVerifier,
    redirectUri: origin.redirectUri,
    ...(origin.resource ? { resource: origin.resource } : {}),
    fetchFn,
  });
  return heldCredential(tokens, origin);
}

/** A new access token for a held credential (its refresh token, rotated when the AS rotates it). */
export async function refreshUpstreamCredential(
  credential: HeldCredential,
  fetchFn: typeof fetch,
): Promise<HeldCredential> {
  if (!credential.refreshToken) throw new UpstreamAuthError("no refresh token: authorize again");
  const { refreshAuthorization } = await mcpClient();
  const tokens = await refreshAuthorization(credential.authorizationServer, {
    metadata: credential.metadata as AuthorizationServerMetadata,
    clientInformation: credential.client as OAuthClientInformationMixed,
    refreshToken: credential.refreshToken,
    ...(credential.resource ? { resource: credential.resource } : {}),
    fetchFn,
  });
  return heldCredential(
    { ...tokens, refresh_token: tokens.refresh_token ?? credential.refreshToken },
    credential,
  );
}

/** The credential to keep from a token response and where it came from. */
export function heldCredential(tokens: OAuthTokens, origin: GrantOrigin): HeldCredential {
  return {
    authorizationServer: origin.authorizationServer,
    ...(origin.metadata ? { metadata: origin.metadata } : {}),
    client: origin.client,
    ...(origin.resource ? { resource: origin.resource } : {}),
    accessToken: tokens.access_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    ...(tokens.scope ? { scope: tokens.scope } : {}),
    ...(typeof tokens.expires_in === "number"
      ? { expiresAt: new Date(Date.now() + tokens.expires_in * 1000).toISOString() }
      : {}),
  };
}

/** The target with the credential's bearer (any configured Authorization header replaced). */
export function withBearer<T extends { headers: Record<string, string> }>(target: T, accessToken: string): T {
  const headers = Object.fromEntries(
    Object.entries(target.headers).filter(([name]) => name.toLowerCase() !== "authorization"),
  );
  return { ...target, headers: { ...headers, authorization: `Bearer ${accessToken}` } };
}

/** Refresh when the access token expires within this margin (or a third of its remaining life). */
export const REFRESH_MARGIN_MS = 2 * 60_000;

/** Whether a credential should be refreshed before use. */
export function needsRefresh(credential: HeldCredential, now = Date.now()): boolean {
  return !!credential.refreshToken && expiresWithinMargin(credential.expiresAt, now);
}

/** Whether an access token expiring at `expiresAt` (ISO; none: unknown) is within the refresh margin. */
export function expiresWithinMargin(expiresAt: string | null | undefined, now = Date.now()): boolean {
  return !!expiresAt && Date.parse(expiresAt) - now < REFRESH_MARGIN_MS;
}

/** The secret strings of a credential (to scrub from any text that might quote them). */
export function credentialSecrets(credential: HeldCredential | undefined): string[] {
  if (!credential) return [];
  return [credential.accessToken, credential.refreshToken, credential.client.client_secret].filter(
    (value): value is string => !!value,
  );
}
