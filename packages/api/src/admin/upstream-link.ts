/**
 * A caller's own (`per_user`) upstream authorization link, opened. Whoever opens it first proves who
 * they are through the gateway's own sign-in — the OpenID provider when one is configured, else the
 * development sign-in page, and for the admin's own link a console session — and is sent on to the
 * upstream's authorization server only when they are the link's opener: the user it was issued for, a
 * key's owner (a member, for a group owner) or the admin. Anyone else gets a page saying the link is
 * not theirs, and nothing changes: the link stays for its person. Opened by its person, the link is
 * used up, and the browser that opened it holds a secret without which the callback does not finish it.
 */
import { randomBytes } from "node:crypto";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type ConsoleAdminSettings, hashState, type Store } from "@mcpgw/aws";
import { errorFields, isIdentityName, type Logger, secretsEqual } from "@mcpgw/core";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { lazyBodyLimit } from "../body-limit";
import type { ConsoleSessions } from "../console/session";
import type { AppEnv } from "../env";
import { sameOrigin } from "../oauth/http";
import { linkSignInPage, messagePage, sendPage } from "../oauth/page";
import { loginBindingOf, newLoginBinding } from "../oidc/binding";
import { isConsoleAdmin, type OidcClient, SignInError } from "../oidc/provider";
import {
  AUTHORIZATION_TTL_SECONDS,
  UPSTREAM_CALLBACK_PATH,
  UPSTREAM_LINK_PATH,
} from "../upstream-authorization";
import { sealFailure } from "./upstream-auth";

/** Where the OpenID provider sends the browser back after a sign-in for a link (a redirect URI to register). */
export const UPSTREAM_SIGNIN_PATH = "/oauth/upstream/signin";
const LOGIN_COOKIE = "mgw_upstream_login";
const LINK_COOKIE = "mgw_upstream_link";
const CSRF_COOKIE = "mgw_upstream_csrf";
const MAX_FORM_BYTES = 16 * 1024;
/** The longest link value read. */
const MAX_LINK = 128;

/** The cookie that holds the secret of the browser that opened link `state` (read by the callback). */
export function holderCookie(state: string): string {
  return `mgw_upstream_${hashState(state)
    .slice(0, 16)
    .replace(/[^A-Za-z0-9]/g, "x")}`;
}

/** How people prove who they are at a link. */
export interface LinkSignIn {
  store: Store;
  logger: Logger;
  /** The admin function's public URL, no trailing slash. */
  publicUrl: string;
  /** The console's sessions: the admin's own links open for a signed-in console. */
  sessions: ConsoleSessions;
  /** The OpenID provider (OIDC_ISSUER); its sign-ins come back to {@link UPSTREAM_SIGNIN_PATH}. */
  oidc: OidcClient | undefined;
  /** Who counts as the admin when signed in at the provider (CONSOLE_ADMIN_GROUP, CONSOLE_ADMINS). */
  admins: ConsoleAdminSettings;
  /** The development sign-in (OAUTH_DEV_SIGNIN, no provider): a name and groups, no password. */
  devSignIn: boolean;
}

/** Who signed in at a link. */
export interface LinkPerson {
  /** The signed-in user's `sub`; absent for the admin by console session. */
  sub?: string;
  groups: string[];
  admin: boolean;
  label: string;
}

/** Whether `person` may open a link whose opener is `opener` (`user:<sub>`, `group:<name>`, `admin`). */
export function opensLink(opener: string, person: LinkPerson): boolean {
  if (opener === "admin") return person.admin;
  if (opener.startsWith("user:")) return person.sub !== undefined && person.sub === opener.slice(5);
  if (opener.startsWith("group:")) return person.sub !== undefined && person.groups.includes(opener.slice(6));
  return false;
}

/** Registers the link's pages: the link itself, the development sign-in's form, the provider's callback. */
export function registerUpstreamLinkPages(app: OpenAPIHono<AppEnv>, deps: LinkSignIn): void {
  const secure = isSecure(deps);
  const signInRedirect = `${deps.publicUrl}${UPSTREAM_SIGNIN_PATH}`;
  const providerCookie = { path: UPSTREAM_SIGNIN_PATH, httpOnly: true, sameSite: "Lax", secure } as const;
  const csrfCookie = { path: UPSTREAM_LINK_PATH, httpOnly: true, sameSite: "Strict", secure } as const;
  const logger = (c: Context<AppEnv>) => loggerOf(c, deps);
  app.use(
    UPSTREAM_LINK_PATH,
    lazyBodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: (c) => sendPage(c, 413, messagePage("Refused", "The form is too large.")),
    }),
  );

  app.get(UPSTREAM_LINK_PATH, async (c) => {
    const link = linkOf(c.req.query("link"));
    if (!link) return unknown(c);
    const found = await usable(c, deps, link);
    if (found instanceof Response) return found;
    if (found.opener === "admin") {
      if (await deps.sessions.current(c))
        return decide(c, deps, link, found, { groups: [], admin: true, label: "the admin (console)" });
      // The development sign-in names no admin: only the console (or a console admin at the provider) does.
      if (!deps.oidc)
        return sendPage(
          c,
          401,
          messagePage(
            "Sign in first",
            "This authorization link is the administrator's: sign in to the console (at / on this site), then open the link again.",
          ),
        );
    }
    if (deps.oidc) {
      const login = newLoginBinding(AUTHORIZATION_TTL_SECONDS);
      let target: URL;
      try {
        target = await deps.oidc.authorizationUrl(signInRedirect, login);
      } catch (error) {
        if (!(error instanceof SignInError)) throw error;
        logger(c).error("upstream link: provider unreachable", errorFields(error));
        return sendPage(c, error.status, messagePage("Sign-in failed", error.message));
      }
      const maxAge = AUTHORIZATION_TTL_SECONDS;
      setCookie(c, LOGIN_COOKIE, login.cookie, { ...providerCookie, maxAge });
      setCookie(c, LINK_COOKIE, link, { ...providerCookie, maxAge });
      c.header("cache-control", "no-store");
      return c.redirect(target.toString(), 302);
    }
    if (deps.devSignIn) {
      const csrf = randomBytes(32).toString("base64url");
      setCookie(c, CSRF_COOKIE, csrf, { ...csrfCookie, maxAge: AUTHORIZATION_TTL_SECONDS });
      return sendPage(c, 200, linkSignInPage(UPSTREAM_LINK_PATH, { link, csrf }));
    }
    return sendPage(
      c,
      503,
      messagePage(
        "No sign-in here",
        "This gateway has no sign-in configured (neither OIDC_ISSUER nor OAUTH_DEV_SIGNIN), so no one can prove they are the person this link was issued for.",
      ),
    );
  });

  // The development sign-in's form.
  app.post(UPSTREAM_LINK_PATH, async (c) => {
    if (!deps.devSignIn)
      return sendPage(c, 403, messagePage("Refused", "The development sign-in is not enabled here."));
    const form = await formOf(c);
    const link = linkOf(form?.get("link") ?? undefined);
    const csrf = form?.get("csrf") ?? "";
    const cookie = getCookie(c, CSRF_COOKIE) ?? "";
    if (!form || !link || !csrf || !secretsEqual(csrf, cookie) || !sameOrigin(c, deps.publicUrl))
      return sendPage(
        c,
        403,
        messagePage("Refused", "The form could not be verified (CSRF check failed). Open the link again."),
      );
    deleteCookie(c, CSRF_COOKIE, csrfCookie);
    const user = (form.get("user") ?? "").trim();
    const groups = [
      ...new Set(
        (form.get("groups") ?? "")
          .split(",")
          .map((group) => group.trim())
          .filter(Boolean),
      ),
    ].sort();
    if (!isIdentityName(user) || groups.length > 20 || !groups.every(isIdentityName))
      return sendPage(c, 400, messagePage("Refused", "That is not a usable user or group name."));
    const found = await usable(c, deps, link);
    if (found instanceof Response) return found;
    return decide(c, deps, link, found, { sub: user, groups, admin: false, label: user });
  });

  // The provider's answer to a sign-in for a link.
  app.get(UPSTREAM_SIGNIN_PATH, async (c) => {
    const oidc = deps.oidc;
    if (!oidc) return sendPage(c, 404, messagePage("Not here", "No OpenID provider is configured."));
    const params = new URL(c.req.url).searchParams;
    const login = loginBindingOf(getCookie(c, LOGIN_COOKIE));
    const link = linkOf(getCookie(c, LINK_COOKIE));
    deleteCookie(c, LOGIN_COOKIE, providerCookie);
    deleteCookie(c, LINK_COOKIE, providerCookie);
    if (!login || !link || !secretsEqual(params.get("state") ?? "", login.state))
      return sendPage(
        c,
        400,
        messagePage(
          "Sign-in failed",
          "This sign-in expired, was already completed, or was started in another browser. Open the link again.",
        ),
      );
    try {
      const identity = await oidc.signIn(signInRedirect, params, login);
      const found = await usable(c, deps, link);
      if (found instanceof Response) return found;
      return await decide(c, deps, link, found, {
        sub: identity.sub,
        groups: identity.groups,
        admin: isConsoleAdmin(identity, deps.admins),
        label: identity.label,
      });
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      logger(c).warn("upstream link: provider sign-in failed", errorFields(error));
      return sendPage(c, error.status, messagePage("Sign-in failed", error.message));
    }
  });
}

/**
 * The signed-in `person` at link `state` (`found`, still usable): sent on to the upstream when they are
 * its opener (the link then used up, this browser holding its secret); refused with a page otherwise,
 * nothing changed.
 */
async function decide(
  c: Context<AppEnv>,
  deps: LinkSignIn,
  state: string,
  found: UsableLink,
  person: LinkPerson,
) {
  const logger = loggerOf(c, deps);
  const fields = { serverId: found.serverId, subject: found.subject };
  if (!opensLink(found.opener, person)) {
    logger.warn("upstream link refused: not its person", fields);
    return sendPage(
      c,
      403,
      messagePage(
        "This link is not yours",
        `You signed in as ${person.label}, but this authorization link was issued for someone else. Only that person can use it; nothing was stored, and the link still waits for them.`,
      ),
    );
  }
  const holder = randomBytes(32).toString("base64url");
  if (!(await deps.store.upstreamCredentials.open(state, hashState(holder)))) return used(c);
  setCookie(c, holderCookie(state), holder, {
    path: UPSTREAM_CALLBACK_PATH,
    httpOnly: true,
    sameSite: "Lax",
    secure: isSecure(deps),
    maxAge: AUTHORIZATION_TTL_SECONDS,
  });
  logger.info("upstream link opened by its person", fields);
  c.header("cache-control", "no-store");
  return c.redirect(found.authorizationUrl, 302);
}

const isSecure = (deps: LinkSignIn) => deps.publicUrl.startsWith("https:");
const loggerOf = (c: Context<AppEnv>, deps: LinkSignIn) => c.get("logger") ?? deps.logger;

/** A link's pending authorization that can still be opened. */
type UsableLink = Exclude<Awaited<ReturnType<typeof usable>>, Response>;

/** The link's authorization when it can still be opened; else the page that says why not. */
async function usable(c: Context<AppEnv>, deps: LinkSignIn, state: string) {
  const found = await deps.store.upstreamCredentials.peek(state).catch(sealFailure);
  if (!found) return await unknown(c);
  const { pending, opened } = found;
  if (opened) return await used(c);
  if (!pending.opener || !pending.authorizationUrl) return await unknown(c);
  return { ...pending, opener: pending.opener, authorizationUrl: pending.authorizationUrl };
}

function unknown(c: Context<AppEnv>) {
  return sendPage(
    c,
    400,
    messagePage(
      "Link unknown or expired",
      "This authorization link is unknown or expired. Call the tool again for a new one.",
    ),
  );
}

function used(c: Context<AppEnv>) {
  return sendPage(
    c,
    400,
    messagePage(
      "Link already used",
      "This authorization link was already opened; a link works once. Call the tool again for a new one.",
    ),
  );
}

function linkOf(value: string | undefined): string | undefined {
  return value && value.length <= MAX_LINK && /^[A-Za-z0-9_-]+$/.test(value) ? value : undefined;
}

async function formOf(c: Context<AppEnv>): Promise<URLSearchParams | undefined> {
  if (!(c.req.header("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return undefined;
  return new URLSearchParams(await c.req.text());
}
