/**
 * The authorization endpoint: the client and its redirect URI checked before anything is redirected,
 * then sign-in (at the OpenID provider, or the development sign-in page) and the consent page, whose
 * answer goes back to the client as a code or an error (RFC 6749 §4.1.2, RFC 9207 `iss`).
 */
import { randomUUID } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type AuthorizationTransaction, hashOAuthSecret, nowSeconds } from "@mcpgw/aws";
import { getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../env";
import { newLoginBinding } from "../oidc/binding";
import { type SourceThrottle, sourceOf } from "../throttle";
import { ClientError, type ResolvedClient } from "./clients";
import {
  type AuthorizationServer,
  CSRF_COOKIE,
  consent,
  csrfCookieOptions,
  formOf,
  page,
  redirectBack,
  sameOrigin,
  secret,
  summaryOf,
  TRANSACTION_SECONDS,
} from "./http";
import { MCP_SCOPE } from "./jwt";
import { toProvider } from "./oidc-sign-in";
import { errorPage, signInPage } from "./page";
import { PKCE_PATTERN } from "./pkce";
import { type ResourceCheck, reachesNothing } from "./resource-check";

/** How long a code waits for its exchange. */
const CODE_SECONDS = 120;
const NAME = /^[A-Za-z0-9._@-]{1,64}$/;

/** An error sent back to the client on its redirect URI (RFC 6749 §4.1.2.1, with RFC 9207 `iss`). */
class RedirectError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

/** Serves `GET /oauth/authorize` (the request) and `POST /oauth/authorize` (sign-in and consent forms). */
export function registerAuthorizeRoutes(
  app: OpenAPIHono<AppEnv>,
  server: AuthorizationServer,
  /** Authorization requests per source: one past its share is a 429 page (Retry-After). */
  authorizations: SourceThrottle,
): void {
  const { store, oidc, devSignIn, issuerOf, clients, resources } = server;

  app.get("/oauth/authorize", async (c) => {
    const wait = authorizations.take(sourceOf(c));
    if (wait !== undefined) {
      c.header("retry-after", String(wait));
      return page(c, 429, errorPage(`Too many authorization requests; try again in ${wait} s.`));
    }
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
      if (oidc && login) return await toProvider(c, server, oidc, login);
      setCookie(c, CSRF_COOKIE, csrf, csrfCookieOptions(issuerOf()));
      return page(c, 200, signInPage(summaryOf(transaction), { tx, csrf }), transaction.redirectUri);
    } catch (error) {
      if (!(error instanceof RedirectError)) throw error;
      return redirectBack(c, issuerOf(), redirectUri, {
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
      redirectBack(c, issuerOf(), transaction.redirectUri, { ...params, state: transaction.state });

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
      return consent(
        c,
        server,
        transaction,
        signedIn,
        { label: user, via: "development sign-in" },
        { tx, csrf },
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
    if (reachesNothing(reach)) {
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
