/**
 * A person's browser opening a per_user upstream authorization link: the gateway's link, its sign-in
 * (the development sign-in form, or a console session for the admin), the upstream's authorization
 * server (the OAuth fixture, as whoever it is told signs in there) and the gateway's callback — each
 * step a real HTTP request, with the browser's cookies kept (per origin).
 */
import { expect } from "vitest";
import type { OAuthUpstream } from "../fixtures/oauth-upstream";
import { TEST_ADMIN_TOKEN } from "./app";
import { CookieBrowser } from "./cookie-browser";

/** Signs `browser` in to the console with the admin token (the admin's own links open for it). */
export async function signInToConsole(browser: CookieBrowser, apiUrl: string): Promise<void> {
  const response = await browser.fetch(`${apiUrl}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
  });
  expect(response.status).toBe(201);
}

/** A url-encoded form POST in `browser`. */
function post(browser: CookieBrowser, url: string, form: Record<string, string>): Promise<Response> {
  return browser.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
}

/** What opening a link at the gateway came to: sent on to the upstream, or a page (refusal, form). */
export interface Opened {
  status: number;
  /** Where the gateway sent the browser (the upstream's authorization URL), when it did. */
  location: string | undefined;
  html: string;
}

/**
 * Opens `link` in `browser` and, on the development sign-in form, signs in as `as` (a user, with
 * groups). Answers where the gateway sent the browser, or the page it showed.
 */
export async function openLink(
  browser: CookieBrowser,
  link: string,
  as?: { user: string; groups?: string[] },
): Promise<Opened> {
  let response = await browser.fetch(link);
  let html = await response.text();
  if (response.status === 200 && as) {
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
    const action = new URL(/action="([^"]+)"/.exec(html)?.[1] ?? "", link).toString();
    response = await post(browser, action, {
      link: field("link"),
      csrf: field("csrf"),
      user: as.user,
      groups: (as.groups ?? []).join(","),
    });
    html = await response.text();
  }
  return { status: response.status, location: response.headers.get("location") ?? undefined, html };
}

/**
 * The whole way, as the rightful person: the link, its sign-in, the upstream (signed in there as
 * `upstreamUser`) and the callback; answers the callback's page (asserted 200).
 */
export async function authorizeThroughLink(
  upstream: OAuthUpstream,
  link: string,
  options: { browser?: CookieBrowser; as?: { user: string; groups?: string[] }; upstreamUser: string },
): Promise<string> {
  const browser = options.browser ?? new CookieBrowser();
  const opened = await openLink(browser, link, options.as);
  expect(opened.status, opened.html).toBe(302);
  return finishAtUpstream(upstream, browser, opened.location as string, options.upstreamUser);
}

/** From the upstream's authorization URL on: approved there as `upstreamUser`, then the callback's page. */
export async function finishAtUpstream(
  upstream: OAuthUpstream,
  browser: CookieBrowser,
  authorizationUrl: string,
  upstreamUser: string,
): Promise<string> {
  upstream.signInAs(upstreamUser);
  const approved = await browser.fetch(authorizationUrl);
  expect(approved.status).toBe(302);
  const page = await browser.fetch(approved.headers.get("location") as string);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  return html;
}

/** The admin's own authorization of a per_user server (their console session opens its link). */
export async function authorizeAsAdmin(
  stack: {
    api: { url: string };
    call: (method: string, path: string) => Promise<{ body: { authorizationUrl: string } }>;
  },
  upstream: OAuthUpstream,
  serverId: string,
  upstreamUser = "the-admin",
): Promise<string> {
  const started = await stack.call("POST", `/v1/servers/${serverId}/authorize`);
  const admin = new CookieBrowser();
  await signInToConsole(admin, stack.api.url);
  return authorizeThroughLink(upstream, started.body.authorizationUrl, { browser: admin, upstreamUser });
}
