/**
 * Starting an authorization of the gateway at an upstream's authorization server, for one subject:
 * `shared` (the admin's one connection) or, in `per_user` mode, a caller's own (`user:<sub>`,
 * `key:<id>`, `admin`). Used by the admin plane (`POST /v1/servers/{id}/authorize`) and by the data
 * plane (a per-user caller with no connection yet). The browser comes back to the admin function's
 * callback, which finishes it; the pending authorization is stored sealed, single use, bound to `state`.
 * A caller's own authorization is handed out as a link to the gateway (`/oauth/upstream/link`), where
 * the person must first sign in as the one it was issued for (see ./admin/upstream-link.ts).
 */
import { randomBytes } from "node:crypto";
import { SealError, type Store } from "@mcpgw/aws";
import {
  AppError,
  errorFields,
  isPerUser,
  type Logger,
  type PlainServer,
  SHARED_SUBJECT,
  UNREADABLE_SECRETS,
  type UpstreamOAuth,
} from "@mcpgw/core";
import {
  authorizationFrom,
  boundedFetch,
  createGuardedFetch,
  describeFailure,
  type PreparedAuthorization,
  prepareUpstreamAuthorization,
  type StartedAuthorization,
} from "@mcpgw/upstream";
import type { Principal } from "./env";

/** The callback path on the admin function (the redirect URI the gateway registers). */
export const UPSTREAM_CALLBACK_PATH = "/oauth/upstream/callback";
/** Where a caller's own authorization link points (admin function): sign-in first, then the upstream. */
export const UPSTREAM_LINK_PATH = "/oauth/upstream/link";
/** The gateway's client metadata document (CIMD), served publicly by the admin function. */
export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";
/** How long an authorization URL stays good. */
export const AUTHORIZATION_TTL_SECONDS = 600;

/** What starting (or finishing) an upstream authorization needs. */
export interface UpstreamAuthDeps {
  store: Store;
  logger: Logger;
  /** The admin function's public URL (PUBLIC_ADMIN_URL): the redirect URI is under it. */
  publicAdminUrl?: string | undefined;
  /** The upstream fetch (default: the outbound guard). */
  fetch?: typeof fetch | undefined;
  allowPrivateUpstreams?: boolean;
}

/**
 * Discoveries and registrations at upstreams, kept a while per (server, version, redirect URI) in this
 * process; concurrent askers share one. A failed one is not kept.
 */
class PreparedAuthorizations {
  private readonly entries = new Map<string, { at: number; prepared: Promise<PreparedAuthorization> }>();
  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  get(key: string, prepare: () => Promise<PreparedAuthorization>): Promise<PreparedAuthorization> {
    const now = Date.now();
    const found = this.entries.get(key);
    if (found && now - found.at < this.ttlMs) return found.prepared;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    const prepared = prepare();
    this.entries.set(key, { at: now, prepared });
    prepared.catch(() => {
      if (this.entries.get(key)?.prepared === prepared) this.entries.delete(key);
    });
    return prepared;
  }
}

const preparedAuthorizations = new PreparedAuthorizations(10 * 60_000, 256);

/**
 * The link each caller was last given, per (server version, subject), handed out again for a minute
 * while it is unused: a caller who calls again before opening it gets the same link, not a new pending
 * authorization (a write and a KMS call) each time.
 */
const recentLinks = new Map<string, { link: AuthorizationLink; state: string; until: number }>();
const RECENT_LINK_MS = 60_000;
const MAX_RECENT_LINKS = 1_000;

/** An authorization to open in a browser, and until when it is good. */
export interface AuthorizationLink {
  authorizationUrl: string;
  expiresAt: string;
}

/**
 * The server's `auth` with its client secret opened (a pre-registered confidential client); the
 * masked view as is when it has none. 409 `server.secrets_unreadable` when it cannot be opened.
 */
async function openedAuth(
  deps: Pick<UpstreamAuthDeps, "store">,
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

/** The fetch upstream discovery, registration and token requests go through (the outbound guard). */
export function upstreamAuthFetch(deps: UpstreamAuthDeps): typeof fetch {
  return boundedFetch(
    deps.fetch ?? createGuardedFetch({ allowPrivate: deps.allowPrivateUpstreams ?? false }),
    AUTH_REQUEST_TIMEOUT_MS,
  );
}

/** The most one discovery, registration or token request to an upstream's AS may take. */
const AUTH_REQUEST_TIMEOUT_MS = 10_000;

/** The admin function's public origin, or a 409 `server.unavailable` naming the setting that is missing. */
export function publicAdminBase(deps: Pick<UpstreamAuthDeps, "publicAdminUrl">): string {
  if (!deps.publicAdminUrl)
    throw new AppError(
      "server.unavailable",
      "Upstream OAuth needs the admin function's public URL (PUBLIC_ADMIN_URL) for its redirect URI.",
    );
  return deps.publicAdminUrl.replace(/\/+$/, "");
}

/**
 * Discovers and registers at the server's authorization server and records the authorization under
 * way for `subject`: the URL to open. The shared connection's is the upstream's own URL; a caller's
 * own (`per_user`) is the gateway's link, which only its opener may use: the user, the admin, or for a
 * key its `owner` (409 `auth.owner_required` for a key with none). Discovery failures are
 * `upstream.unreachable` (502).
 */
export async function beginUpstreamAuthorization(
  deps: UpstreamAuthDeps,
  server: Extract<PlainServer, { transport: "http" }>,
  subject: string,
  keyOwner?: string,
): Promise<AuthorizationLink> {
  if (server.auth?.type !== "oauth")
    throw new AppError(
      "server.not_oauth",
      `Server '${server.name}' has no \`auth\` of type oauth: nothing to authorize.`,
    );
  const opener = subject === SHARED_SUBJECT ? undefined : linkOpener(server.name, subject, keyOwner);
  const perCaller = subject !== SHARED_SUBJECT && subject !== "admin";
  const linkKey = `${server.id}@${server.version}@${subject}`;
  const recent = perCaller ? recentLinks.get(linkKey) : undefined;
  // Still unused (one read, no KMS): a link already opened and finished is never handed out again.
  if (recent && recent.until > Date.now() && (await deps.store.upstreamCredentials.isPending(recent.state)))
    return recent.link;
  const base = publicAdminBase(deps);
  const state = randomBytes(32).toString("base64url");
  const redirectUri = `${base}${UPSTREAM_CALLBACK_PATH}`;
  let started: StartedAuthorization;
  try {
    // A user's authorization reuses this process's recent discovery and registration of the server
    // (callers who have not authorized yet must not register the gateway anew each call); an admin's
    // starts afresh.
    const prepare = async () =>
      prepareUpstreamAuthorization({
        url: server.url,
        auth: await openedAuth(deps, server.id, server.auth as UpstreamOAuth),
        redirectUri,
        clientMetadataUrl: `${base}${CLIENT_METADATA_PATH}`,
        fetch: upstreamAuthFetch(deps),
      });
    const prepared = !perCaller
      ? await prepare()
      : await preparedAuthorizations.get(`${server.id}@${server.version}@${redirectUri}`, prepare);
    started = await authorizationFrom(prepared, redirectUri, state);
  } catch (error) {
    // The gateway's own refusals (secrets unreadable, the server gone) are answered as they are.
    if (error instanceof AppError) throw error;
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
    subject,
    redirectUri,
    expiresAt,
    ...(opener ? { opener, authorizationUrl } : {}),
  });
  deps.logger.info("upstream authorization started", {
    serverId: server.id,
    server: server.name,
    subject,
    authorizationServer: origin.authorizationServer,
  });
  const link = {
    authorizationUrl: opener
      ? `${base}${UPSTREAM_LINK_PATH}?${new URLSearchParams({ link: state })}`
      : authorizationUrl,
    expiresAt: new Date(expiresAt * 1000).toISOString(),
  };
  if (perCaller) {
    if (recentLinks.size >= MAX_RECENT_LINKS) recentLinks.delete(recentLinks.keys().next().value as string);
    recentLinks.set(linkKey, { link, state, until: Date.now() + RECENT_LINK_MS });
  }
  return link;
}

/**
 * Who must sign in to open the link of `subject`'s own authorization: the user themselves, the admin,
 * or a key's owner (`user:<name>` / `group:<name>`); 409 `auth.owner_required` for a key with none.
 */
function linkOpener(serverName: string, subject: string, keyOwner: string | undefined): string {
  if (!subject.startsWith("key:")) return subject;
  if (keyOwner) return keyOwner;
  throw new AppError(
    "auth.owner_required",
    `Server '${serverName}' needs each caller to authorize their own account, which a person does by signing in as the key's owner — and this key has none. Create a key with an owner (POST /v1/keys with "owner": "user:<name>" or "group:<name>", or the owner field of the console's key form) and call with it.`,
  );
}

/** The owner of a caller's key (who opens its authorization links); undefined for other callers. */
export function keyOwnerOf(principal: Principal | undefined): string | undefined {
  return principal?.kind === "key" ? principal.owner : undefined;
}

/** Whose own upstream connection a caller uses in `per_user` mode: `user:<sub>`, `key:<id>` or `admin`. */
export function credentialSubject(principal: Principal | undefined): string {
  if (!principal) throw new AppError("auth.unauthorized", "Missing or invalid bearer token.");
  if (principal.kind === "user") return `user:${principal.sub}`;
  if (principal.kind === "key") return `key:${principal.keyId}`;
  return "admin";
}

/**
 * Deletes a subject's own upstream credentials at every `per_user` server (a revoked key, a user whose
 * access was removed): nothing of theirs is left to use. Answers how many there were.
 */
export async function forgetSubject(store: Store, subject: string): Promise<number> {
  const servers = (await store.servers.listPlain()).filter(isPerUser);
  const removed = await Promise.all(
    servers.map((server) => store.upstreamCredentials.remove(server.id, subject)),
  );
  return removed.filter(Boolean).length;
}
