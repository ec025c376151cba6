/**
 * What the authorization server's endpoints share: their context (store, clients, resources, the
 * issuer read per request), the RFC 6749 errors, form parsing, the pages' response and the redirect
 * back to the client.
 */
import { randomBytes } from "node:crypto";
import type { AuthorizationTransaction, GrantSubject, Store } from "@mcpgw/aws";
import type { Logger } from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { OidcClient } from "../oidc/provider";
import { type ClientDirectory, isLoopbackRedirect } from "./clients";
import { consentPage, type RequestSummary, sendPage } from "./page";
import type { ResourceCheck } from "./resource-check";
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

/** What every endpoint of the authorization server works with. */
export interface AuthorizationServer {
  store: Store;
  logger: Logger;
  oauth: OAuthOptions;
  /** The OpenID provider people sign in with; the development sign-in is off when there is one. */
  oidc: OidcClient | undefined;
  /** Whether the development sign-in page is served (asked for, and no provider). */
  devSignIn: boolean;
  /** The issuer, no trailing slash (read per request: a test stack learns its origin once it listens). */
  issuerOf: () => string;
  /** Where the OpenID provider sends the browser back (a path on the issuer). */
  callbackPath: string;
  clients: ClientDirectory;
  resources: ResourceCheck;
}

/** How long an authorization may wait for the user. */
export const TRANSACTION_SECONDS = 600;
/** The CSRF cookie of the authorization pages. */
export const CSRF_COOKIE = "mgw_oauth_csrf";

/** An RFC 6749 §5.2 error of the token (and registration, revocation) endpoint. */
export class TokenError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

/** A fresh random secret (32 bytes, base64url) after `prefix`. */
export const secret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`;

/** A cross-origin form post is refused (the browser names its origin; non-browsers may not). */
export function sameOrigin(c: Context<AppEnv>, issuer: string): boolean {
  const origin = c.req.header("origin");
  return origin === undefined || origin === "null" ? origin === undefined : origin === new URL(issuer).origin;
}

/** The request's url-encoded form. */
export async function formOf(c: Context<AppEnv>): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) {
    throw new TokenError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  return new URLSearchParams(await c.req.text());
}

/** Marks the response as not to be cached (RFC 6749 §5.1). */
export function noStore(c: Context<AppEnv>): void {
  c.header("cache-control", "no-store");
  c.header("pragma", "no-cache");
}

/** An authorization page; `redirectUri` is where its form's answer may redirect (the CSP allows it). */
export function page(c: Context<AppEnv>, status: number, html: string, redirectUri?: string) {
  return sendPage(c, status, html, redirectUri ? new URL(redirectUri).origin : undefined);
}

/** A redirect to the client with `params` and `iss` (RFC 9207). */
export function redirectBack(
  c: Context<AppEnv>,
  issuer: string,
  redirectUri: string,
  params: Record<string, string | undefined>,
) {
  const target = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) target.searchParams.set(name, value);
  target.searchParams.set("iss", issuer);
  noStore(c);
  return c.redirect(target.toString(), 302);
}

/** The CSRF cookie's options: Strict, for the authorization pages only. */
export function csrfCookieOptions(issuer: string) {
  return {
    path: "/oauth",
    httpOnly: true,
    sameSite: "Strict",
    secure: issuer.startsWith("https:"),
    maxAge: TRANSACTION_SECONDS,
  } as const;
}

/** What the pages show of a transaction's request. */
export function summaryOf(transaction: AuthorizationTransaction): RequestSummary {
  const redirect = new URL(transaction.redirectUri);
  return {
    clientName: transaction.clientName,
    clientId: transaction.clientId,
    redirectHost: redirect.host,
    loopbackRedirect: isLoopbackRedirect(transaction.redirectUri),
    resource: transaction.resource,
  };
}

/**
 * The consent page of a signed-in transaction (`who` as shown), listing the servers the user will
 * reach; its form carries `tx` and `csrf`.
 */
export async function consent(
  c: Context<AppEnv>,
  server: AuthorizationServer,
  transaction: AuthorizationTransaction,
  signedIn: GrantSubject,
  who: { label: string; via: string },
  form: { tx: string; csrf: string },
) {
  const reach = await server.resources.serversOf(signedIn, transaction.resource);
  return page(
    c,
    200,
    consentPage(summaryOf(transaction), { ...who, sub: signedIn.sub }, { names: reach.names }, form),
    transaction.redirectUri,
  );
}
