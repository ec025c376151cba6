/**
 * The OAuth 2.1 authorization server on the gateway plane: metadata (RFC 8414), JWKS, dynamic client
 * registration (RFC 7591), the authorization endpoint — sign-in at the configured OpenID provider
 * (OIDC_ISSUER; its callback `/oauth/oidc/callback`) or, without one, the development sign-in page —
 * and the consent page,
 * the token endpoint (code + PKCE S256, refresh-token rotation) and revocation (RFC 7009). Access
 * tokens are ES256 JWTs for one exact resource, `${issuer}/mcp` or `${issuer}/mcp/{server}`.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import {
  type AccessSubject,
  type AuthorizationTransaction,
  type GrantSubject,
  hashOAuthSecret,
  nowSeconds,
  type Store,
} from "@mcpgw/aws";
import { errorFields, type Logger, secretsEqual } from "@mcpgw/core";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { lazyBodyLimit } from "../body-limit";
import type { AppEnv } from "../env";
import { type LoginBinding, loginBindingOf, newLoginBinding } from "../oidc/binding";
import { type OidcClient, SignInError } from "../oidc/provider";
import {
  ClientDirectory,
  ClientError,
  isLoopbackRedirect,
  RegistrationRequest,
  type ResolvedClient,
} from "./clients";
import { ACCESS_TOKEN_TTL_SECONDS, MCP_SCOPE, mintAccessToken } from "./jwt";
import { consentPage, errorPage, pageCsp, pageHeaders, type RequestSummary, signInPage } from "./page";
import { PKCE_PATTERN, verifierMatches } from "./pkce";
import type { TokenSigner } from "./signer";

/** The authorization server's configuration (AppDeps `oauth`). */
export interface OAuthOptions {
  /** The gateway's public origin, no trailing slash; `iss` of every token and response. */
  issuer: string;
  signer: TokenSigner;
  /** Serve the development sign-in (a user name, no password): dev and tests only, never with `oidc`. */
  devSignIn: boolean;
  /** How client metadata documents are fetched (default: the SSRF guard, public addresses only). */
  fetch?: typeof fetch;
}

/** How long an authorization may wait for the user, a code for its exchange, a refresh family in all. */
const TRANSACTION_SECONDS = 600;
const CODE_SECONDS = 120;
const REFRESH_FAMILY_SECONDS = 30 * 24 * 3600;
/** The CSRF cookie of the authorization pages. */
const CSRF_COOKIE = "mgw_oauth_csrf";
/** The cookie binding a sign-in at the OpenID provider to this browser (see ../oidc/binding.ts). */
const LOGIN_COOKIE = "mgw_oauth_login";
/** Where the OpenID provider sends the browser back. */
export const OIDC_CALLBACK_PATH = "/oauth/oidc/callback";
const NAME = /^[A-Za-z0-9._@-]{1,64}$/;
const MAX_FORM_BYTES = 16 * 1024;

/** An RFC 6749 §5.2 error of the token (and registration, revocation) endpoint. */
class TokenError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

/** An error sent back to the client on its redirect URI (RFC 6749 §4.1.2.1, with RFC 9207 `iss`). */
class RedirectError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

const secret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`;

/** Registers the authorization server's routes on `app`. */
export function registerOAuthRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: {
    store: Store;
    logger: Logger;
    oauth: OAuthOptions;
    fetch: typeof fetch;
    /** The OpenID provider people sign in with; the development sign-in is off when there is one. */
    oidc?: OidcClient | undefined;
  },
): void {
  const { store, oauth, oidc } = deps;
  const devSignIn = oauth.devSignIn && !oidc;
  // Read per request: an in-process test stack learns its own origin (the issuer) once it listens.
  const issuerOf = () => oauth.issuer.replace(/\/+$/, "");
  const clients = new ClientDirectory(store.oauth, oauth.fetch ?? deps.fetch);
  const resources = new ResourceCheck(store, issuerOf);

  app.use(
    "/oauth/*",
    lazyBodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: (c) => c.json({ error: "invalid_request", error_description: "Request body too large" }, 413),
    }),
  );

  app.get("/.well-known/oauth-authorization-server", (c) => {
    c.header("access-control-allow-origin", "*");
    c.header("cache-control", "public, max-age=300");
    return c.json(authorizationServerMetadata(issuerOf()));
  });

  app.get("/oauth/jwks", async (c) => {
    c.header("access-control-allow-origin", "*");
    c.header("cache-control", "public, max-age=300");
    return c.json(await oauth.signer.publicJwks());
  });

  app.post("/oauth/register", async (c) => {
    noStore(c);
    const body = await c.req.json().catch(() => undefined);
    const parsed = RegistrationRequest.safeParse(body);
    if (!parsed.success) {
      const redirect = parsed.error.issues.some((issue) => issue.path[0] === "redirect_uris");
      return c.json(
        {
          error: redirect ? "invalid_redirect_uri" : "invalid_client_metadata",
          error_description: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
        },
        400,
      );
    }
    const client = await clients.register(parsed.data);
    c.get("logger").info("oauth client registered", { clientId: client.clientId });
    return c.json(
      {
        client_id: client.clientId,
        client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
        client_name: client.clientName,
        redirect_uris: client.redirectUris,
        grant_types: client.grantTypes,
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      201,
    );
  });

  app.get("/oauth/authorize", async (c) => {
    const query = new URL(c.req.url).searchParams;
    if (!devSignIn && !oidc) {
      return page(
        c,
        503,
        errorPage(
          "No sign-in method is configured on this gateway (neither OIDC_ISSUER nor OAUTH_DEV_SIGNIN).",
        ),
      );
    }
    // The client and its redirect URI first: until both are known good, nothing is redirected.
    let client: ResolvedClient;
    const redirectUri = single(query, "redirect_uri");
    try {
      const clientId = single(query, "client_id");
      if (!clientId) throw new ClientError("The request names no client_id.");
      client = await clients.resolve(clientId);
      if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
        throw new ClientError("The redirect_uri is not one the client registered (they must match exactly).");
      }
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      return page(c, 400, errorPage(error.message));
    }
    const state = single(query, "state");
    try {
      const request = await validateAuthorizationRequest(query, resources);
      const csrf = secret("");
      // With a provider, the transaction waits under its sign-in's state (derived from the login cookie).
      const login = oidc ? newLoginBinding(TRANSACTION_SECONDS) : undefined;
      const tx = login ? login.state : secret("");
      const transaction: AuthorizationTransaction = {
        clientId: client.clientId,
        clientName: client.clientName,
        redirectUri,
        state,
        codeChallenge: request.codeChallenge,
        resource: request.resource,
        scope: MCP_SCOPE,
        csrfHash: hashOAuthSecret(csrf),
        refreshable: client.grantTypes.includes("refresh_token"),
        expiresAt: nowSeconds() + TRANSACTION_SECONDS,
      };
      await store.oauth.saveTransaction(hashOAuthSecret(tx), transaction);
      if (oidc && login) return await toProvider(c, oidc, login);
      setCookie(c, CSRF_COOKIE, csrf, csrfCookieOptions());
      return page(c, 200, signInPage(summaryOf(transaction), { tx, csrf }), transaction.redirectUri);
    } catch (error) {
      if (!(error instanceof RedirectError)) throw error;
      return redirectBack(c, redirectUri, {
        error: error.error,
        error_description: error.description,
        state,
      });
    }
  });

  app.post("/oauth/authorize", async (c) => {
    const form = await formOf(c).catch(() => undefined);
    if (!form) return page(c, 400, errorPage("The form must be posted url-encoded."));
    const tx = form.get("tx") ?? "";
    const csrf = form.get("csrf") ?? "";
    const cookie = getCookie(c, CSRF_COOKIE) ?? "";
    const txHash = hashOAuthSecret(tx);
    const transaction = tx ? await store.oauth.transaction(txHash) : undefined;
    if (!transaction)
      return page(c, 400, errorPage("This authorization request expired or was already answered."));
    if (
      !csrf ||
      csrf !== cookie ||
      hashOAuthSecret(csrf) !== transaction.csrfHash ||
      !sameOrigin(c, issuerOf())
    ) {
      return page(
        c,
        403,
        errorPage("The form could not be verified (CSRF check failed). Start again from the application."),
      );
    }
    const back = (params: Record<string, string | undefined>) =>
      redirectBack(c, transaction.redirectUri, { ...params, state: transaction.state });

    if (form.get("step") === "signin") {
      if (!devSignIn) return page(c, 403, errorPage("The development sign-in is not enabled here."));
      const user = (form.get("user") ?? "").trim();
      const groups = (form.get("groups") ?? "")
        .split(",")
        .map((group) => group.trim())
        .filter(Boolean);
      if (!NAME.test(user) || groups.length > 20 || !groups.every((group) => NAME.test(group))) {
        return page(c, 400, errorPage("User and group names are 1-64 letters, digits or . _ @ -."));
      }
      const signedIn = { sub: user, groups: [...new Set(groups)].sort() };
      await store.oauth.saveTransaction(txHash, { ...transaction, signedIn });
      const reach = await resources.serversOf(signedIn, transaction.resource);
      return page(
        c,
        200,
        consentPage(
          summaryOf(transaction),
          { label: user, sub: user, via: "development sign-in" },
          { names: reach.names },
          { tx, csrf },
        ),
        transaction.redirectUri,
      );
    }

    // The consent: the transaction is answered once, whatever the answer.
    const taken = await store.oauth.takeTransaction(txHash);
    if (!taken?.signedIn)
      return page(c, 400, errorPage("This authorization request expired or was already answered."));
    if (form.get("decision") !== "allow") {
      return back({ error: "access_denied", error_description: "The user denied the request." });
    }
    const reach = await resources.serversOf(taken.signedIn, taken.resource);
    if (reach.ids !== null && reach.ids.length === 0) {
      return back({ error: "access_denied", error_description: "The user may reach no MCP server here." });
    }
    const code = secret("mgwc_");
    await store.oauth.saveCode(hashOAuthSecret(code), {
      ...taken.signedIn,
      clientId: taken.clientId,
      redirectUri: taken.redirectUri,
      codeChallenge: taken.codeChallenge,
      resource: taken.resource,
      scope: taken.scope,
      familyId: randomUUID(),
      refreshable: taken.refreshable,
      expiresAt: nowSeconds() + CODE_SECONDS,
    });
    c.get("logger").info("oauth authorization granted", {
      clientId: taken.clientId,
      sub: taken.signedIn.sub,
    });
    return back({ code });
  });

  app.get(OIDC_CALLBACK_PATH, async (c) => {
    if (!oidc) return page(c, 404, errorPage("No OpenID provider is configured on this gateway."));
    const params = new URL(c.req.url).searchParams;
    const login = loginBindingOf(getCookie(c, LOGIN_COOKIE));
    deleteCookie(c, LOGIN_COOKIE, loginCookieOptions());
    const stale = () =>
      page(
        c,
        400,
        errorPage(
          "This sign-in expired, was already completed, or was started in another browser. Start again from the application.",
        ),
      );
    if (!login || !secretsEqual(params.get("state") ?? "", login.state)) return stale();
    // Single use: whatever the provider answered, this sign-in is over.
    const taken = await store.oauth.takeTransaction(hashOAuthSecret(login.state));
    if (!taken) return stale();
    let identity: Awaited<ReturnType<OidcClient["signIn"]>>;
    try {
      identity = await oidc.signIn(`${issuerOf()}${OIDC_CALLBACK_PATH}`, params, login);
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      c.get("logger").warn("oauth provider sign-in failed", {
        clientId: taken.clientId,
        ...errorFields(error),
      });
      if (error.refused) {
        return redirectBack(c, taken.redirectUri, {
          error: "access_denied",
          error_description: error.message,
          state: taken.state,
        });
      }
      return page(c, error.status, errorPage(error.message));
    }
    const tx = secret("");
    const csrf = secret("");
    const signedIn = { sub: identity.sub, groups: identity.groups };
    const transaction: AuthorizationTransaction = {
      ...taken,
      csrfHash: hashOAuthSecret(csrf),
      signedIn,
      expiresAt: nowSeconds() + TRANSACTION_SECONDS,
    };
    await store.oauth.saveTransaction(hashOAuthSecret(tx), transaction);
    setCookie(c, CSRF_COOKIE, csrf, csrfCookieOptions());
    c.get("logger").info("oauth signed in at the provider", {
      clientId: taken.clientId,
      sub: identity.sub,
      groups: identity.groups.length,
    });
    const reach = await resources.serversOf(signedIn, transaction.resource);
    return page(
      c,
      200,
      consentPage(
        summaryOf(transaction),
        { label: identity.label, sub: identity.sub, via: oidc.providerName },
        { names: reach.names },
        { tx, csrf },
      ),
      transaction.redirectUri,
    );
  });

  app.post("/oauth/token", async (c) => {
    noStore(c);
    try {
      const form = await formOf(c);
      const grantType = form.get("grant_type");
      const clientId = form.get("client_id");
      if (!clientId) throw new TokenError("invalid_client", "client_id is required (public clients).", 401);
      const tokens =
        grantType === "authorization_code"
          ? await exchangeCode(form, clientId)
          : grantType === "refresh_token"
            ? await refresh(form, clientId)
            : undefined;
      if (!tokens)
        throw new TokenError(
          "unsupported_grant_type",
          "grant_type must be authorization_code or refresh_token.",
        );
      return c.json(tokens, 200);
    } catch (error) {
      if (!(error instanceof TokenError)) {
        c.get("logger").error("token endpoint failed", errorFields(error));
        return c.json({ error: "server_error", error_description: "The token could not be issued." }, 500);
      }
      if (error.status === 401) c.header("www-authenticate", 'Basic realm="oauth"');
      return c.json({ error: error.error, error_description: error.description }, error.status as 400);
    }
  });

  app.post("/oauth/revoke", async (c) => {
    noStore(c);
    const form = await formOf(c).catch(() => new URLSearchParams());
    const token = form.get("token");
    if (!token) return c.json({ error: "invalid_request", error_description: "token is required." }, 400);
    // RFC 7009: an unknown token, or another client's, is answered 200 all the same.
    const found = await store.oauth.refresh(hashOAuthSecret(token));
    if (found && found.grant.clientId === form.get("client_id")) {
      await store.oauth.revokeFamily(found.grant.familyId);
      c.get("logger").info("oauth refresh family revoked", { clientId: found.grant.clientId });
    }
    return c.body(null, 200);
  });

  /** authorization_code: the code once, for its client, redirect URI, resource and verifier. */
  async function exchangeCode(form: URLSearchParams, clientId: string) {
    const code = form.get("code");
    const verifier = form.get("code_verifier");
    if (!code || !verifier) throw new TokenError("invalid_request", "code and code_verifier are required.");
    const used = await store.oauth.consumeCode(hashOAuthSecret(code));
    if (!used) throw new TokenError("invalid_grant", "The code is unknown or expired.");
    const { code: record, firstUse } = used;
    if (!firstUse) {
      // A replayed code: what it issued may be in the wrong hands.
      await store.oauth.revokeFamily(record.familyId);
      throw new TokenError("invalid_grant", "The code was already used.");
    }
    if (record.clientId !== clientId)
      throw new TokenError("invalid_grant", "The code was issued to another client.");
    if (form.get("redirect_uri") !== record.redirectUri) {
      throw new TokenError("invalid_grant", "redirect_uri does not match the authorization request.");
    }
    const resource = form.get("resource");
    if (resource !== null && resource !== record.resource) {
      throw new TokenError("invalid_target", "resource does not match the authorization request.");
    }
    if (!verifierMatches(verifier, record.codeChallenge)) {
      throw new TokenError("invalid_grant", "code_verifier does not match the code challenge.");
    }
    const reach = await resources.serversOf(record, record.resource);
    if (reach.ids !== null && reach.ids.length === 0) {
      throw new TokenError("invalid_grant", "The user may no longer reach any MCP server.");
    }
    let refreshToken: string | undefined;
    if (record.refreshable) {
      refreshToken = secret("mgwr_");
      await store.oauth.issueRefresh(hashOAuthSecret(refreshToken), {
        familyId: record.familyId,
        clientId,
        resource: record.resource,
        scope: record.scope,
        sub: record.sub,
        groups: record.groups,
        expiresAt: nowSeconds() + REFRESH_FAMILY_SECONDS,
      });
    }
    return tokenResponse(clientId, record.resource, record, reach.ids, refreshToken);
  }

  /** refresh_token: rotated on every use; a reused token revokes its family. */
  async function refresh(form: URLSearchParams, clientId: string) {
    const token = form.get("refresh_token");
    if (!token) throw new TokenError("invalid_request", "refresh_token is required.");
    const hash = hashOAuthSecret(token);
    const found = await store.oauth.refresh(hash);
    if (!found || found.grant.clientId !== clientId) {
      throw new TokenError("invalid_grant", "The refresh token is unknown, expired or another client's.");
    }
    const resource = form.get("resource");
    if (resource !== null && resource !== found.grant.resource) {
      throw new TokenError("invalid_target", "resource does not match the grant.");
    }
    const scope = form.get("scope");
    if (scope?.split(" ").some((s) => s && s !== MCP_SCOPE)) {
      throw new TokenError("invalid_scope", "The only scope is mcp.");
    }
    const next = secret("mgwr_");
    const rotated = await store.oauth.rotateRefresh(hash, hashOAuthSecret(next));
    if (rotated.outcome !== "rotated") {
      if (rotated.outcome === "reused") {
        deps.logger.warn("oauth refresh token reused: family revoked", { clientId });
      }
      throw new TokenError("invalid_grant", "The refresh token was already used or revoked.");
    }
    const grant = rotated.previous;
    const reach = await resources.serversOf(grant, grant.resource);
    if (reach.ids !== null && reach.ids.length === 0) {
      await store.oauth.revokeFamily(grant.familyId);
      throw new TokenError("invalid_grant", "The user may no longer reach any MCP server.");
    }
    return tokenResponse(clientId, grant.resource, grant, reach.ids, next);
  }

  async function tokenResponse(
    clientId: string,
    resource: string,
    subject: GrantSubject,
    servers: string[] | null,
    refreshToken: string | undefined,
  ) {
    const accessToken = await mintAccessToken(oauth.signer, {
      iss: issuerOf(),
      aud: resource,
      sub: subject.sub,
      client_id: clientId,
      scope: MCP_SCOPE,
      servers,
    });
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      scope: MCP_SCOPE,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    };
  }

  function csrfCookieOptions() {
    return {
      path: "/oauth",
      httpOnly: true,
      sameSite: "Strict",
      secure: issuerOf().startsWith("https:"),
      maxAge: TRANSACTION_SECONDS,
    } as const;
  }

  /** The login cookie: Lax, as the provider's redirect back is a cross-site navigation. */
  function loginCookieOptions() {
    return {
      path: OIDC_CALLBACK_PATH,
      httpOnly: true,
      sameSite: "Lax",
      secure: issuerOf().startsWith("https:"),
      maxAge: TRANSACTION_SECONDS,
    } as const;
  }

  /** Sends the browser to the provider to sign in (a page saying so when it cannot be reached). */
  async function toProvider(c: Context<AppEnv>, client: OidcClient, login: LoginBinding) {
    let target: URL;
    try {
      target = await client.authorizationUrl(`${issuerOf()}${OIDC_CALLBACK_PATH}`, login);
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      c.get("logger").error("oauth provider unreachable", errorFields(error));
      return page(c, error.status, errorPage(error.message));
    }
    setCookie(c, LOGIN_COOKIE, login.cookie, loginCookieOptions());
    noStore(c);
    return c.redirect(target.toString(), 302);
  }

  /** A redirect to the client with `params` and `iss` (RFC 9207). */
  function redirectBack(c: Context<AppEnv>, redirectUri: string, params: Record<string, string | undefined>) {
    const target = new URL(redirectUri);
    for (const [name, value] of Object.entries(params))
      if (value !== undefined) target.searchParams.set(name, value);
    target.searchParams.set("iss", issuerOf());
    noStore(c);
    return c.redirect(target.toString(), 302);
  }
}

/** The RFC 8414 metadata of the authorization server at `issuer`. */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/oauth/jwks`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [MCP_SCOPE],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * Which resources this gateway serves and which servers a user reaches: the union of the mappings of
 * the user and their groups (null: every server).
 */
class ResourceCheck {
  constructor(
    private readonly store: Store,
    private readonly issuerOf: () => string,
  ) {}

  private get issuer(): string {
    return this.issuerOf();
  }

  /** Whether `resource` is `${issuer}/mcp` or `${issuer}/mcp/{server}` of an existing server. */
  async known(resource: string): Promise<boolean> {
    if (resource === `${this.issuer}/mcp`) return true;
    const prefix = `${this.issuer}/mcp/`;
    if (!resource.startsWith(prefix)) return false;
    const name = resource.slice(prefix.length);
    return (
      /^[^/?#]+$/.test(name) &&
      (await this.store.servers.resolvePlain(decodeURIComponent(name))) !== undefined
    );
  }

  /** The servers `who` may reach for `resource`: ids (null: all) and names for the consent page. */
  async serversOf(
    who: GrantSubject,
    resource: string,
  ): Promise<{ ids: string[] | null; names: string[] | "all" }> {
    const subjects: AccessSubject[] = [
      `user:${who.sub}`,
      ...who.groups.map((group) => `group:${group}` as const),
    ];
    const mappings = await this.store.oauth.access(subjects);
    const servers = await this.store.servers.listPlain();
    let ids: string[] | null = mappings.some((m) => m.serverIds === null)
      ? null
      : [...new Set(mappings.flatMap((m) => m.serverIds ?? []))].sort();
    // A token for one server reaches nothing when that server is not among the user's.
    const prefix = `${this.issuer}/mcp/`;
    if (resource.startsWith(prefix)) {
      const target = await this.store.servers.resolvePlain(decodeURIComponent(resource.slice(prefix.length)));
      if (!target || (ids !== null && !ids.includes(target.id))) ids = [];
    }
    if (ids === null) return { ids, names: "all" };
    const byId = new Map(servers.map((server) => [server.id, server.name]));
    const live = ids.filter((id) => byId.has(id));
    return { ids: live, names: live.map((id) => byId.get(id) ?? id).sort() };
  }
}

/** Checks what follows the client and redirect URI; a RedirectError goes back to the client. */
async function validateAuthorizationRequest(query: URLSearchParams, resources: ResourceCheck) {
  for (const name of [
    "response_type",
    "code_challenge",
    "code_challenge_method",
    "resource",
    "scope",
    "state",
  ]) {
    if (query.getAll(name).length > 1) throw new RedirectError("invalid_request", `${name} is repeated.`);
  }
  if (query.get("response_type") !== "code") {
    throw new RedirectError("unsupported_response_type", "response_type must be code.");
  }
  const codeChallenge = query.get("code_challenge") ?? "";
  if (!PKCE_PATTERN.test(codeChallenge) || query.get("code_challenge_method") !== "S256") {
    throw new RedirectError(
      "invalid_request",
      "PKCE is required: code_challenge with code_challenge_method S256.",
    );
  }
  const resource = query.get("resource");
  if (!resource) throw new RedirectError("invalid_target", "resource is required (RFC 8707).");
  if (!(await resources.known(resource)))
    throw new RedirectError("invalid_target", "resource is not served here.");
  const scope = query.get("scope");
  if (scope?.split(" ").some((s) => s && s !== MCP_SCOPE)) {
    throw new RedirectError("invalid_scope", "The only scope is mcp.");
  }
  return { codeChallenge, resource };
}

/** The one value of a query parameter; undefined when absent or repeated. */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  return values.length === 1 ? values[0] : undefined;
}

/** The request's url-encoded form. */
async function formOf(c: Context<AppEnv>): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    throw new TokenError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  return new URLSearchParams(await c.req.text());
}

/** A cross-origin form post is refused (the browser names its origin; non-browsers may not). */
function sameOrigin(c: Context<AppEnv>, issuer: string): boolean {
  const origin = c.req.header("origin");
  return origin === undefined || origin === "null" ? origin === undefined : origin === new URL(issuer).origin;
}

function summaryOf(transaction: AuthorizationTransaction): RequestSummary {
  const redirect = new URL(transaction.redirectUri);
  return {
    clientName: transaction.clientName,
    clientId: transaction.clientId,
    redirectHost: redirect.host,
    loopbackRedirect: isLoopbackRedirect(transaction.redirectUri),
    resource: transaction.resource,
  };
}

function page(c: Context<AppEnv>, status: number, html: string, redirectUri?: string) {
  const headers = pageHeaders(pageCsp(redirectUri ? new URL(redirectUri).origin : undefined));
  return c.body(html, status as 200, headers);
}

function noStore(c: Context<AppEnv>): void {
  c.header("cache-control", "no-store");
  c.header("pragma", "no-cache");
}
