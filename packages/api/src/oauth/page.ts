/**
 * The authorization pages: server-rendered HTML (`hono/html`: every value escaped), no script and no
 * style attribute, under a CSP that allows none (`default-src 'none'`) and posts forms only to this
 * origin and, for the redirect that follows the consent, to the client's redirect origin. Their
 * security headers come from `hono/secure-headers`, set to exactly these.
 */
import type { Context } from "hono";
import { html, raw } from "hono/html";
import { secureHeaders } from "hono/secure-headers";
import type { HtmlEscapedString } from "hono/utils/html";

/** What `html` makes: escaped markup (never a promise here: no fragment is asynchronous). */
export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The markup as text. */
function render(markup: Markup): string {
  if (markup instanceof Promise) throw new TypeError("an authorization page has no asynchronous part");
  return markup.toString();
}

/** The CSP directives of the pages; `redirectOrigin` is where the consent form's answer redirects. */
function cspDirectives(redirectOrigin?: string) {
  return {
    defaultSrc: ["'none'"],
    formAction: ["'self'", ...(redirectOrigin ? [redirectOrigin] : [])],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  };
}

/**
 * `secureHeaders` limited to the pages' own set: the CSP, `X-Frame-Options: DENY`,
 * `Referrer-Policy: no-referrer` and `nosniff` — none of its other defaults.
 */
function pageSecurity(redirectOrigin?: string) {
  return secureHeaders({
    contentSecurityPolicy: cspDirectives(redirectOrigin),
    xFrameOptions: "DENY",
    referrerPolicy: "no-referrer",
    xContentTypeOptions: "nosniff",
    crossOriginResourcePolicy: false,
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
    strictTransportSecurity: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  });
}

/**
 * Answers `page` (never cached) with the pages' security headers; `redirectOrigin` is where its form's
 * answer may redirect (added to the CSP's `form-action`).
 */
export async function sendPage(
  c: Context,
  status: number,
  page: string | Markup,
  redirectOrigin?: string,
): Promise<Response> {
  const text = typeof page === "string" ? page : render(page);
  await pageSecurity(redirectOrigin)(c, async () => {
    c.res = c.body(text, status as 200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
    });
  });
  return c.res;
}

const layout = (title: string, body: Markup) =>
  render(html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`);

const hidden = (fields: Record<string, string>) =>
  raw(
    Object.entries(fields)
      .map(([name, value]) => render(html`<input type="hidden" name="${name}" value="${value}">`))
      .join("\n"),
  );

/** What the client asks for, shown on both steps. */
export interface RequestSummary {
  clientName: string;
  clientId: string;
  redirectHost: string;
  loopbackRedirect: boolean;
  resource: string;
}

const summary = (request: RequestSummary) => html`<dl>
<dt>Application</dt><dd id="client-name">${request.clientName}</dd>
<dt>Client id</dt><dd>${request.clientId}</dd>
<dt>Sends you back to</dt><dd id="redirect-host">${request.redirectHost}</dd>
<dt>Resource</dt><dd id="resource">${request.resource}</dd>
</dl>
${request.loopbackRedirect ? html`<p>The application runs on this computer (its redirect goes to a loopback address).</p>` : ""}`;

/** Step 1: the development sign-in (a user name and optional groups, no password). */
export function signInPage(request: RequestSummary, form: { tx: string; csrf: string }): string {
  return layout(
    "Development sign-in — MCP Gateway",
    html`<p><strong>Development sign-in:</strong> anyone who can reach this page can claim any user name. It is
enabled by OAUTH_DEV_SIGNIN and must not be used in production.</p>
${summary(request)}
<form method="post" action="/oauth/authorize">
${hidden({ step: "signin", tx: form.tx, csrf: form.csrf })}
<p><label>User name <input name="user" required maxlength="64" pattern="[A-Za-z0-9._@\\-]+" autocomplete="username"></label></p>
<p><label>Groups (comma-separated, optional) <input name="groups" maxlength="600"></label></p>
<p><button type="submit">Sign in</button></p>
</form>`,
  );
}

/**
 * The development sign-in before an upstream authorization link goes on: who is there (a name and
 * optional groups, no password), posted back to `action` with the link and the CSRF token.
 */
export function linkSignInPage(action: string, form: { link: string; csrf: string }): string {
  return layout(
    "Sign in to authorize — MCP Gateway",
    html`<p>This link lets the gateway reach a server with your own account there. Sign in first: only the
person it was issued for may go on.</p>
<p><strong>Development sign-in:</strong> anyone who can reach this page can claim any user name. It is
enabled by OAUTH_DEV_SIGNIN and must not be used in production.</p>
<form method="post" action="${action}">
${hidden({ link: form.link, csrf: form.csrf })}
<p><label>User name <input name="user" required maxlength="255" autocomplete="username"></label></p>
<p><label>Groups (comma-separated, optional) <input name="groups" maxlength="600"></label></p>
<p><button type="submit">Sign in</button></p>
</form>`,
  );
}

/** Step 2: consent, listing the servers the signed-in user will reach (or saying there are none). */
export function consentPage(
  request: RequestSummary,
  who: { label: string; sub: string; via: string },
  servers: { names: string[] | "all" },
  form: { tx: string; csrf: string },
): string {
  const none = servers.names !== "all" && servers.names.length === 0;
  const list =
    servers.names === "all"
      ? html`<p id="servers">Every MCP server of the gateway.</p>`
      : none
        ? html`<p id="servers">You have access to no MCP server, so this application cannot be allowed. Ask an administrator to map your user or a group to servers (PUT /v1/access/user:${encodeURIComponent(who.sub)}).</p>`
        : html`<ul id="servers">${servers.names.map((name) => html`<li>${name}</li>`)}</ul>`;
  return layout(
    "Allow access? — MCP Gateway",
    html`<p>Signed in as <strong id="user">${who.label}</strong>${who.label === who.sub ? "" : html` (user <code id="sub">${who.sub}</code>)`} through <span id="via">${who.via}</span>.</p>
${summary(request)}
<h2>Servers the application will reach</h2>
${list}
<form method="post" action="/oauth/authorize">
${hidden({ step: "consent", tx: form.tx, csrf: form.csrf })}
${none ? "" : html`<button type="submit" name="decision" value="allow">Allow</button>`}
<button type="submit" name="decision" value="deny">${none ? "Back to the application" : "Deny"}</button>
</form>`,
  );
}

/** A page of one message: its title, and one paragraph (text, or markup made by `html`). */
export function messagePage(title: string, message: string | Markup): string {
  return layout(title, html`<p>${message}</p>`);
}

/** An authorization request that cannot be sent back to the client (unknown client, bad redirect URI). */
export function errorPage(message: string): string {
  return layout(
    "Authorization request refused — MCP Gateway",
    html`<p id="error">${message}</p>
<p>The application's request cannot be completed, and you are not being sent back to it.</p>`,
  );
}
