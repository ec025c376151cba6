/**
 * A browser without a screen, for sign-in flows that cross origins: fetch with a cookie jar per
 * origin (names and values only: enough for the gateway's and the provider's cookies, which the tests
 * do not share between origins) and redirects followed by hand, each hop kept.
 */

/** One response on the way, with the URL it answered. */
export interface Hop {
  url: URL;
  response: Response;
}

export class CookieBrowser {
  private readonly jars = new Map<string, Map<string, string>>();

  /** The cookies held for `origin`. */
  cookies(origin: string): Map<string, string> {
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    return jar;
  }

  /** One request, cookies sent and kept; redirects not followed. */
  async fetch(url: URL | string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const jar = this.cookies(target.origin);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const [name = "", ...rest] = pair.split("=");
      const value = rest.join("=");
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) jar.delete(name.trim());
      else jar.set(name.trim(), value);
    }
    return response;
  }

  /**
   * GETs `url` and follows redirects until one leaves for `stop` (answered, not requested: the MCP
   * client's redirect URI) or a page is answered. Every hop, and where it stopped.
   */
  async follow(
    url: URL | string,
    stop: (url: URL) => boolean,
  ): Promise<{ hops: Hop[]; last: Hop; stoppedAt?: URL }> {
    const hops: Hop[] = [];
    let next = new URL(url);
    for (let i = 0; i < 20; i += 1) {
      const response = await this.fetch(next);
      const hop = { url: next, response };
      hops.push(hop);
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) return { hops, last: hop };
      next = new URL(location, next);
      if (stop(next)) return { hops, last: hop, stoppedAt: next };
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }
}
