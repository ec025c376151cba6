/**
 * The gateway as an OAuth client of the upstreams it fronts (`auth: { type: "oauth", mode: "shared" }`):
 * an admin asks for an authorization URL, opens it, and the upstream's authorization server sends the
 * browser back to the admin function's callback, which exchanges the code (PKCE) and keeps the tokens
 * sealed. The callback is unauthenticated: it is bound to a stored, single-use, short-lived `state`.
 */
import { randomBytes } from "node:crypto";
import { SealError } from "@mcpgw/aws";
import { AppError, errorFields, SHARED_SUBJECT, UNREADABLE_SECRETS, type UpstreamOAuth } from "@mcpgw/core";
import {
  createGuardedFetch,
  credentialSecrets,
  describeFailure,
  finishUpstreamAuthorization,
  gatewayClientMetadata,
  scrubSecrets,
  startUpstreamAuthorization,
} from "@mcpgw/upstream";
import { escapeHtml } from "../oauth/page";
import { type AdminDeps, reconnectServer } from "./service";

/** The callback path on the admin function (the redirect URI the gateway registers). */
export const UPSTREAM_CALLBACK_PATH = "/oauth/upstream/callback";
/** The gateway's client metadata document (CIMD), served publicly by the admin function. */
export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";
/** How long an authorization URL stays good. */
export const AUTHORIZATION_TTL_SECONDS = 600;

/** What the upstream-OAuth routes need: the admin deps (`publicAdminUrl`, `fetch`). */
export type UpstreamAuthDeps = AdminDeps;

/** The fetch upstream discovery, registration and token requests go through (the outbound guard). */
function fetchOf(deps: UpstreamAuthDeps): typeof fetch {
  return deps.fetch ?? createGuardedFetch({ allowPrivate: deps.allowPrivateUpstreams });
}

function adminUrl(deps: UpstreamAuthDeps): string {
  if (!deps.publicAdminUrl)
    throw new AppError(
      "server.unavailable",
      "Upstream OAuth needs the admin function's public URL (PUBLIC_ADMIN_URL) for its redirect URI.",
    );
  return deps.publicAdminUrl.replace(/\/+$/, "");
}

/** The gateway's CIMD document (its `client_id` is its own URL). */
export function clientMetadataDocument(deps: UpstreamAuthDeps) {
  const base = adminUrl(deps);
  return gatewayClientMetadata(`${base}${UPSTREAM_CALLBACK_PATH}`, `${base}${CLIENT_METADATA_PATH}`);
}

/** Starts a `shared` authorization of a server: the URL an admin opens, and until when it is good. */
export async function authorizeServer(
  deps: UpstreamAuthDeps,
  idOrName: string,
): Promise<{ authorizationUrl: string; expiresAt: string }> {
  const server = await deps.store.servers.resolvePlain(idOrName);
  if (!server) throw new AppError("server.not_found", `No server with id or name '${idOrName}'.`);
  if (server.transport !== "http" || !server.auth)
    throw new AppError(
      "server.not_oauth",
      `Server '${server.name}' has no \`auth\`: nothing to authorize (give it \`auth: { type: "oauth" }\` first).`,
    );
  if (server.auth.type === "client_credentials")
    throw new AppError(
      "server.no_authorize_step",
      `Server '${server.name}' uses the client_credentials grant: the gateway obtains its tokens itself, no one authorizes it. A refused grant is fixed by correcting \`auth\` (client id, secret).`,
    );
  const auth = await openedAuth(deps, server.id, server.auth);
  const base = adminUrl(deps);
  const state = randomBytes(32).toString("base64url");
  const redirectUri = `${base}${UPSTREAM_CALLBACK_PATH}`;
  let started: Awaited<ReturnType<typeof startUpstreamAuthorization>>;
  try {
    started = await startUpstreamAuthorization({
      url: server.url,
      auth,
      redirectUri,
      state,
      clientMetadataUrl: `${base}${CLIENT_METADATA_PATH}`,
      fetch: fetchOf(deps),
    });
  } catch (error) {
    deps.logger.warn("upstream authorization could not start", {
      serverId: server.id,
      ...errorFields(error),
    });
    throw new AppError(
      "upstream.unreachable",
      `Could not discover or register at the authorization server of '${server.name}': ${describeFailure(error)}`,
    );
  }
  const expiresAt = Math.floor(Date.now() / 1000) + AUTHORIZATION_TTL_SECONDS;
  const { authorizationUrl, ...origin } = started;
  await deps.store.upstreamCredentials.begin(state, {
    ...origin,
    serverId: server.id,
    subject: SHARED_SUBJECT,
    redirectUri,
    expiresAt,
  });
  deps.logger.info("upstream authorization started", {
    serverId: server.id,
    server: server.name,
    authorizationServer: origin.authorizationServer,
  });
  return { authorizationUrl, expiresAt: new Date(expiresAt * 1000).toISOString() };
}

/**
 * The server's `auth` with its client secret opened (a pre-registered confidential client); the
 * masked view as is when it has none. 409 `server.secrets_unreadable` when it cannot be opened.
 */
async function openedAuth(
  deps: UpstreamAuthDeps,
  serverId: string,
  auth: UpstreamOAuth,
): Promise<UpstreamOAuth> {
  if (auth.clientSecret === undefined) return auth;
  const record = await deps.store.servers.get(serverId).catch((error: unknown) => {
    if (!(error instanceof SealError)) throw error;
    throw new AppError("server.secrets_unreadable", `The server's ${UNREADABLE_SECRETS}; send auth again.`);
  });
  if (record?.transport !== "http" || record.auth?.type !== "oauth")
    throw new AppError("server.not_found", "The server changed meanwhile; retry.");
  return record.auth;
}

/** What the callback answers: a small page (never the code or a token). */
export interface CallbackPage {
  status: 200 | 400;
  html: string;
}

/** Finishes an authorization: the code exchanged, the tokens sealed, a reconnect enqueued. */
export async function completeAuthorization(
  deps: UpstreamAuthDeps,
  query: Record<string, string | undefined>,
): Promise<CallbackPage> {
  const state = query.state;
  const pending = state ? await deps.store.upstreamCredentials.take(state).catch(sealFailure) : undefined;
  if (!pending) return failed("This authorization link is unknown, used or expired. Start again.");
  const server = await deps.store.servers.getPlain(pending.serverId);
  if (server?.transport !== "http" || !server.auth)
    return failed("The server this authorization was for is gone or no longer uses OAuth.");
  if (query.error) {
    deps.logger.warn("upstream authorization refused", { serverId: server.id, error: query.error });
    return failed(`The authorization server refused: ${query.error}.`);
  }
  if (!query.code) return failed("The authorization server sent no code.");
  let credential: Awaited<ReturnType<typeof finishUpstreamAuthorization>>;
  try {
    credential = await finishUpstreamAuthorization(
      pending,
      { code: query.code, iss: query.iss },
      fetchOf(deps),
    );
  } catch (error) {
    const text = scrubSecrets(describeFailure(error), [
      query.code,
      pending.codeVerifier,
      pending.client.client_secret ?? "",
    ]);
    deps.logger.warn("upstream code exchange failed", { serverId: server.id, error: text });
    return failed(`The authorization server did not exchange the code: ${text}`);
  }
  await deps.store.upstreamCredentials.put(server.id, pending.subject, credential);
  deps.logger.info("upstream authorized", {
    serverId: server.id,
    server: server.name,
    expiresAt: credential.expiresAt ?? null,
    refreshable: credentialSecrets(credential).length > 1,
  });
  if (server.enabled) {
    await reconnectServer(deps, server.id).catch((error: unknown) =>
      deps.logger.warn("reconnect after authorization failed", {
        serverId: server.id,
        ...errorFields(error),
      }),
    );
  }
  return {
    status: 200,
    html: page(
      "Authorized",
      `The gateway is now authorized at <strong>${escapeHtml(server.name)}</strong>. You can close this window.`,
    ),
  };
}

function sealFailure(error: unknown): undefined {
  if (error instanceof SealError) return undefined;
  throw error;
}

function failed(message: string): CallbackPage {
  return { status: 400, html: page("Authorization failed", escapeHtml(message)) };
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${body}</p></main></body></html>
`;
}
