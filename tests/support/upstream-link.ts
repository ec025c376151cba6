/**
 * A person's browser opening a per_user upstream authorization link: the gateway's link, its sign-in
 * (the development sign-in form, or a console session for the admin), the upstream's authorization
 * server (the OAuth fixture, as whoever it is told signs in there) and the gateway's callback — each
 * step a real HTTP request, with the browser's cookies kept.
 */
import { expect } from "vitest";
import type { OAuthUpstream } from "../fixtures/oauth-upstream";
import { TEST_ADMIN_TOKEN } from "./app";

/** Cookies by name (paths ignored: every request of the test browser goes to one gateway). */
export class Browser {
  readonly cookies = new Map<string, string>();

  /** A GET or form POST with this browser's cookies; the answer's cookies are kept. */
  async request(url: string, form?: Record<string, string>): Promise<Response> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, {
      redirect: "manual",
      method: form ? "POST" : "GET",
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (gone) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  /** Signs this browser in to the console with the admin token (the admin's own links open for it). */
  async signInToConsole(apiUrl: string): Promise<void> {
    const response = await fetch(`${apiUrl}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
    });
    expect(response.status).toBe(201);
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
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
  browser: Browser,
  link: string,
  as?: { user: string; groups?: string[] },
): Promise<Opened> {
  let response = await browser.request(link);
  let html = await response.text();
  if (response.status === 200 && as) {
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
    const action = new URL(/action="([^"]+)"/.exec(html)?.[1] ?? "", link).toString();
    response = await browser.request(action, {
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
  options: { browser?: Browser; as?: { user: string; groups?: string[] }; upstreamUser: string },
): Promise<string> {
  const browser = options.browser ?? new Browser();
  const opened = await openLink(browser, link, options.as);
  expect(opened.status, opened.html).toBe(302);
  return finishAtUpstream(upstream, browser, opened.location as string, options.upstreamUser);
}

/** From the upstream's authorization URL on: approved there as `upstreamUser`, then the callback's page. */
export async function finishAtUpstream(
  upstream: OAuthUpstream,
  browser: Browser,
  authorizationUrl: string,
  upstreamUser: string,
): Promise<string> {
  upstream.signInAs(upstreamUser);
  const approved = await browser.request(authorizationUrl);
  expect(approved.status).toBe(302);
  const page = await browser.request(approved.headers.get("location") as string);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  return html;
}
