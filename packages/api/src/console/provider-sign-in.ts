/**
 * Console sign-in through the OpenID provider (OIDC_ISSUER), beside the admin token (break-glass):
 * `/console/oidc/start` sends the browser to the provider, `/console/oidc/callback` verifies its answer
 * and, for an admin (CONSOLE_ADMIN_GROUP member or CONSOLE_ADMINS entry), starts the same session the
 * token starts; anyone else gets a page saying they are not an admin. Like the authorization server's
 * pages, these are browser flows, not REST routes (not in the OpenAPI document).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ConsoleAdminSettings } from "@mcpgw/aws";
import { errorFields, secretsEqual } from "@mcpgw/core";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import type { AppEnv } from "../env";
import { sendPage } from "../oauth/page";
import { loginBindingOf, newLoginBinding } from "../oidc/binding";
import { consoleAdminRule, type OidcClient, SignInError } from "../oidc/provider";
import type { ConsoleSessions } from "./session";

/** Where the console's sign-in button goes, and where the provider sends the browser back. */
export const CONSOLE_OIDC_START = "/console/oidc/start";
export const CONSOLE_OIDC_CALLBACK = "/console/oidc/callback";
const LOGIN_COOKIE = "mgw_console_login";
const LOGIN_SECONDS = 600;

/** Registers the provider sign-in of the console. */
export function registerConsoleProviderSignIn(
  app: OpenAPIHono<AppEnv>,
  deps: {
    sessions: ConsoleSessions;
    oidc: OidcClient;
    admins: ConsoleAdminSettings;
    /** The admin function's public URL (PUBLIC_ADMIN_URL): the redirect URI is under it. */
    publicUrl: string;
  },
): void {
  const redirectUri = `${deps.publicUrl}${CONSOLE_OIDC_CALLBACK}`;
  const secure = deps.publicUrl.startsWith("https:");
  const cookieOptions = { path: CONSOLE_OIDC_CALLBACK, httpOnly: true, sameSite: "Lax", secure } as const;

  app.get(CONSOLE_OIDC_START, async (c) => {
    const login = newLoginBinding(LOGIN_SECONDS);
    let target: URL;
    try {
      target = await deps.oidc.authorizationUrl(redirectUri, login);
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      c.get("logger").error("console provider unreachable", errorFields(error));
      return page(c, error.status, "Sign-in failed", error.message);
    }
    setCookie(c, LOGIN_COOKIE, login.cookie, { ...cookieOptions, maxAge: LOGIN_SECONDS });
    c.header("cache-control", "no-store");
    return c.redirect(target.toString(), 302);
  });

  app.get(CONSOLE_OIDC_CALLBACK, async (c) => {
    const params = new URL(c.req.url).searchParams;
    // Single use: the cookie goes now, and the provider takes its code once.
    const login = loginBindingOf(getCookie(c, LOGIN_COOKIE));
    deleteCookie(c, LOGIN_COOKIE, cookieOptions);
    if (!login || !secretsEqual(params.get("state") ?? "", login.state)) {
      return page(
        c,
        400,
        "Sign-in failed",
        "This sign-in expired, was already completed, or was started in another browser. Start again from the console.",
      );
    }
    let identity: Awaited<ReturnType<OidcClient["signIn"]>>;
    try {
      identity = await deps.oidc.signIn(redirectUri, params, login);
    } catch (error) {
      if (!(error instanceof SignInError)) throw error;
      c.get("logger").warn("console provider sign-in failed", errorFields(error));
      return page(c, error.status, "Sign-in failed", error.message);
    }
    const rule = consoleAdminRule(identity, deps.admins);
    if (rule === undefined) {
      c.get("logger").warn("console sign-in refused: not an admin", { sub: identity.sub });
      return page(
        c,
        403,
        "Not an administrator",
        `You signed in as ${identity.label} (user ${identity.sub}), who is not an administrator of this gateway. An administrator is a member of the group CONSOLE_ADMIN_GROUP names, or is listed in CONSOLE_ADMINS.`,
      );
    }
    await deps.sessions.start(c, { via: "provider", rule, sub: identity.sub });
    c.get("logger").info("console signed in", { via: "oidc", sub: identity.sub });
    c.header("cache-control", "no-store");
    return c.redirect("/", 302);
  });
}

/** A small page of the console's sign-in flow (escaped; no script; a link back to the console). */
function page(c: Context<AppEnv>, status: number, title: string, message: string) {
  const markup = html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} — MCP Gateway</title></head>
<body>
<main>
<h1>${title}</h1>
<p id="error">${message}</p>
<p><a href="/">Back to the console sign-in</a></p>
</main>
</body>
</html>
`;
  return sendPage(c, status, markup);
}
