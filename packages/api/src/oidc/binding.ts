/**
 * The browser's side of a sign-in at the OpenID provider: one random value in an HttpOnly cookie, from
 * which the request's `state`, `nonce` and PKCE verifier are derived. Nothing of it is stored: the
 * provider sends `state` back, only the browser that started the sign-in holds the cookie that derives
 * it, and the cookie names its own end (changing it changes every derived value).
 */
import { createHash, randomBytes } from "node:crypto";

/** What one sign-in at the provider is bound by. */
export interface LoginBinding {
  /** The cookie's value: `<expires at, epoch seconds>.<256 random bits>`. */
  cookie: string;
  state: string;
  nonce: string;
  /** The PKCE code verifier (43 base64url characters) and its S256 challenge. */
  verifier: string;
  challenge: string;
}

const COOKIE_VALUE = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/** A fresh binding that lasts `ttlSeconds`. */
export function newLoginBinding(ttlSeconds: number, now = Math.floor(Date.now() / 1000)): LoginBinding {
  return bindingOf(`${now + ttlSeconds}.${randomBytes(32).toString("base64url")}`);
}

/** The binding a cookie carries; undefined when it is missing, malformed or past its end. */
export function loginBindingOf(
  cookie: string | undefined,
  now = Math.floor(Date.now() / 1000),
): LoginBinding | undefined {
  const match = cookie ? COOKIE_VALUE.exec(cookie) : null;
  if (!cookie || !match || Number(match[1]) < now) return undefined;
  return bindingOf(cookie);
}

function bindingOf(cookie: string): LoginBinding {
  const derive = (label: string) => digest(`mcpgw oidc ${label}\0${cookie}`);
  const verifier = derive("pkce");
  return { cookie, state: derive("state"), nonce: derive("nonce"), verifier, challenge: digest(verifier) };
}
