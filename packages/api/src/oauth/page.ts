/**
 * The authorization pages: server-rendered HTML with every value escaped, no script and no style
 * attribute, under a CSP that allows none (`default-src 'none'`) and posts forms only to this origin
 * and, for the redirect that follows the consent, to the client's redirect origin.
 */

/** HTML-escapes text for element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char,
  );
}

/** The pages' CSP; `redirectOrigin` is where the consent form's answer redirects (browsers check it). */
export function pageCsp(redirectOrigin?: string): string {
  return [
    "default-src 'none'",
    `form-action 'self'${redirectOrigin ? ` ${redirectOrigin}` : ""}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** Headers every authorization page carries. */
export function pageHeaders(csp: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": csp,
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  };
}

const layout = (title: string, body: string) =>
  `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;

const hidden = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("\n");

/** What the client asks for, shown on both steps. */
export interface RequestSummary {
  clientName: string;
  clientId: string;
  redirectHost: string;
  loopbackRedirect: boolean;
  resource: string;
}

const summary = (request: RequestSummary) => `<dl>
<dt>Application</dt><dd id="client-name">${escapeHtml(request.clientName)}</dd>
<dt>Client id</dt><dd>${escapeHtml(request.clientId)}</dd>
<dt>Sends you back to</dt><dd id="redirect-host">${escapeHtml(request.redirectHost)}</dd>
<dt>Resource</dt><dd id="resource">${escapeHtml(request.resource)}</dd>
</dl>
${request.loopbackRedirect ? "<p>The application runs on this computer (its redirect goes to a loopback address).</p>" : ""}`;

/** Step 1: the development sign-in (a user name and optional groups, no password). */
export function signInPage(request: RequestSummary, form: { tx: string; csrf: string }): string {
  return layout(
    "Development sign-in — MCP Gateway",
    `<p><strong>Development sign-in:</strong> anyone who can reach this page can claim any user name. It is
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
      ? `<p id="servers">Every MCP server of the gateway.</p>`
      : none
        ? `<p id="servers">You have access to no MCP server, so this application cannot be allowed. Ask an administrator to map your user or a group to servers (PUT /v1/access/user:${escapeHtml(encodeURIComponent(who.sub))}).</p>`
        : `<ul id="servers">${servers.names.map((name) => `<li>${escapeHtml(name)}</li>`).join("")}</ul>`;
  return layout(
    "Allow access? — MCP Gateway",
    `<p>Signed in as <strong id="user">${escapeHtml(who.label)}</strong>${who.label === who.sub ? "" : ` (user <code id="sub">${escapeHtml(who.sub)}</code>)`} through <span id="via">${escapeHtml(who.via)}</span>.</p>
${summary(request)}
<h2>Servers the application will reach</h2>
${list}
<form method="post" action="/oauth/authorize">
${hidden({ step: "consent", tx: form.tx, csrf: form.csrf })}
${none ? "" : '<button type="submit" name="decision" value="allow">Allow</button>'}
<button type="submit" name="decision" value="deny">${none ? "Back to the application" : "Deny"}</button>
</form>`,
  );
}

/** An authorization request that cannot be sent back to the client (unknown client, bad redirect URI). */
export function errorPage(message: string): string {
  return layout(
    "Authorization request refused — MCP Gateway",
    `<p id="error">${escapeHtml(message)}</p>
<p>The application's request cannot be completed, and you are not being sent back to it.</p>`,
  );
}
