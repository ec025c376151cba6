/**
 * Sign-in at the configured OpenID provider (OIDC_ISSUER) during an authorization: the browser goes
 * to the provider, comes back to the callback, and the consent page follows.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type AuthorizationTransaction, hashOAuthSecret, nowSeconds } from "@mcpgw/aws";
import { errorFields, secretsEqual } from "@mcpgw/core";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../env";
import { type LoginBinding, loginBindingOf } from "../oidc/binding";
import { type OidcClient, SignInError } from "../oidc/provider";
import {
  type AuthorizationServer,
  CSRF_COOKIE,
  consent,
  csrfCookieOptions,
  noStore,
  page,
  redirectBack,
  secret,
  TRANSACTION_SECONDS,
} from "./http";
import { errorPage } from "./page";

/** The cookie binding a sign-in at the OpenID provider to this browser (see ../oidc/binding.ts). */
const LOGIN_COOKIE = "mgw_oauth_login";

/** The login cookie: Lax, as the provider's redirect back is a cross-site navigation. */
function loginCookieOptions(server: AuthorizationServer) {
  return {
    path: server.callbackPath,
    httpOnly: true,
    sameSite: "Lax",
    secure: server.issuerOf().startsWith("https:"),
    maxAge: TRANSACTION_SECONDS,
  } as const;
}

/** Sends the browser to the provider to sign in (a page saying so when it cannot be reached). */
export async function toProvider(
  c: Context<AppEnv>,
  server: AuthorizationServer,
  client: OidcClient,
  login: LoginBinding,
) {
  let target: URL;
  try {
    target = await client.authorizationUrl(`${server.issuerOf()}${server.callbackPath}`, login);
  } catch (error) {
    if (!(error instanceof SignInError)) throw error;
    c.get("logger").error("oauth provider unreachable", errorFields(error));
    return page(c, error.status, errorPage(error.message));
  }
  setCookie(c, LOGIN_COOKIE, login.cookie, loginCookieOptions(server));
  noStore(c);
  return c.redirect(target.toString(), 302);
}

/**
 * Serves the provider's callback: the sign-in's state and cookie checked, the transaction taken once,
 * the identity verified by the provider, then the consent page (or a refusal back to the client).
 */
export function registerProviderCallback(app: OpenAPIHono<AppEnv>, server: AuthorizationServer): void {
  const { store, oidc, issuerOf } = server;
  app.get(server.callbackPath, async (c) => {
    if (!oidc) return page(c, 404, errorPage("No OpenID provider is configured on this gateway."));
    const params = new URL(c.req.url).searchParams;
    const login = loginBindingOf(getCookie(c, LOGIN_COOKIE));
    deleteCookie(c, LOGIN_COOKIE, loginCookieOptions(server));
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
      identity = await oidc.signIn(`${issuerOf()}${server.callbackPath}`, params, login);
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      c.get("logger").warn("oauth provider sign-in failed", {
        clientId: taken.clientId,
        ...errorFields(error),
      });
      if (error.refused) {
        return redirectBack(c, issuerOf(), taken.redirectUri, {
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
    setCookie(c, CSRF_COOKIE, csrf, csrfCookieOptions(issuerOf()));
    c.get("logger").info("oauth signed in at the provider", {
      clientId: taken.clientId,
      sub: identity.sub,
      groups: identity.groups.length,
    });
    const who = { label: identity.label, via: oidc.providerName };
    return consent(c, server, transaction, signedIn, who, { tx, csrf });
  });
}
