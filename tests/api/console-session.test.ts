/**
 * The console's sign-in: the admin token for an HttpOnly, SameSite=Strict, expiring session cookie
 * (Secure over HTTPS); cookie-authenticated state changes need the CSRF token; sign-out ends the
 * session everywhere; a session ends when the admin token it was made with is rotated, and
 * `DELETE /console/sessions` signs everyone out; the MCP endpoints never take the cookie; every console
 * response has a strict CSP.
 */
import { CONSOLE_CSP } from "@mcpgw/api";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestApp, TEST_ADMIN_TOKEN } from "../support/app";

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/** Signs in; answers the cookie (name=value) and the CSRF token. */
async function signIn(app: TestApp["app"], headers: Record<string, string> = {}) {
  const response = await app.request("/console/session", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
  });
  expect(response.status).toBe(201);
  const setCookie = response.headers.get("set-cookie") ?? "";
  const body = (await response.json()) as { csrfToken: string; expiresAt: string; gatewayUrl: string };
  return { setCookie, cookie: setCookie.split(";")[0] ?? "", ...body };
}

describe("console sessions", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ console: true });
  });

  it("refuses a wrong token, and sets an HttpOnly SameSite=Strict expiring cookie for the right one", async () => {
    const wrong = await t.app.request("/console/session", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: "not-the-token" }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();

    const { setCookie, expiresAt, csrfToken, gatewayUrl } = await signIn(t.app);
    // One app serves both planes here: MCP clients reach the gateway at this origin.
    expect(gatewayUrl).toBe("http://localhost");
    expect(setCookie).toMatch(/^mgw_console=[\w-]{40,};/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Expires=/);
    expect(setCookie).not.toMatch(/Secure/);
    expect(setCookie).not.toContain(TEST_ADMIN_TOKEN);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    expect(csrfToken).toMatch(/^[\w-]{40,}$/);
  });

  it("marks the cookie Secure when the client came over HTTPS", async () => {
    const { setCookie } = await signIn(t.app, { "x-forwarded-proto": "https" });
    expect(setCookie).toMatch(/Secure/);
  });

  it("reads with the cookie; changes state only with the CSRF token", async () => {
    const { cookie, csrfToken } = await signIn(t.app);
    const read = await t.app.request("/v1/servers", { headers: { cookie } });
    expect(read.status).toBe(200);

    const create = (headers: Record<string, string>) =>
      t.app.request("/v1/secrets/console-csrf", {
        method: "PUT",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: JSON.stringify({ values: { A: "b" } }),
      });
    const without = await create({});
    expect(without.status).toBe(403);
    expect(((await without.json()) as { code: string }).code).toBe("auth.csrf_failed");
    expect((await create({ "x-csrf-token": "forged" })).status).toBe(403);
    expect((await create({ "x-csrf-token": csrfToken })).status).toBe(200);

    const session = await t.app.request("/console/session", { headers: { cookie } });
    expect(await session.json()).toMatchObject({ csrfToken });
  });

  it("signing out ends the session: the cookie no longer works, here or anywhere", async () => {
    const { cookie, csrfToken } = await signIn(t.app);
    const refused = await t.app.request("/console/session", { method: "DELETE", headers: { cookie } });
    expect(refused.status).toBe(403);
    const out = await t.app.request("/console/session", {
      method: "DELETE",
      headers: { cookie, "x-csrf-token": csrfToken },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/mgw_console=;/);

    // Another instance of the app (another Lambda environment) over the same table refuses it too.
    const elsewhere = await createTestApp({ console: true });
    for (const app of [t.app, elsewhere.app]) {
      expect((await app.request("/v1/servers", { headers: { cookie } })).status).toBe(401);
      expect((await app.request("/console/session", { headers: { cookie } })).status).toBe(401);
    }
  });

  it("rotating ADMIN_TOKEN ends every session made with the old one, CSRF token included", async () => {
    const { cookie, csrfToken } = await signIn(t.app);
    // The stack restarted with a new admin token, over the same table.
    const rotated = await createTestApp({
      console: true,
      store: t.store,
      adminToken: "rotated-admin-token-9f2c",
    });
    const put = (app: TestApp["app"]) =>
      app.request("/v1/secrets/console-rotated", {
        method: "PUT",
        headers: { cookie, "x-csrf-token": csrfToken, "content-type": "application/json" },
        body: JSON.stringify({ values: { A: "b" } }),
      });
    expect((await rotated.app.request("/v1/servers", { headers: { cookie } })).status).toBe(401);
    expect((await rotated.app.request("/console/session", { headers: { cookie } })).status).toBe(401);
    expect((await put(rotated.app)).status).toBe(401);
    expect(
      (await rotated.app.request("/v1/servers", { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }))
        .status,
    ).toBe(401);
    // A session made with the new token works there.
    const fresh = await rotated.app.request("/console/session", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: "rotated-admin-token-9f2c" }),
    });
    expect(fresh.status).toBe(201);
    const freshCookie = (fresh.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect((await rotated.app.request("/v1/servers", { headers: { cookie: freshCookie } })).status).toBe(200);
  });

  it("DELETE /console/sessions signs everyone out; it takes the admin token or a session with its CSRF token", async () => {
    const [first, second] = [await signIn(t.app), await signIn(t.app)];
    const signOutAll = (headers: Record<string, string>) =>
      t.app.request("/console/sessions", { method: "DELETE", headers });
    const live = async (cookie: string) =>
      (await t.app.request("/v1/servers", { headers: { cookie } })).status === 200;

    expect((await signOutAll({})).status).toBe(401);
    expect((await signOutAll({ authorization: "Bearer mgw_not-a-key" })).status).toBe(401);
    const key = (await (
      await t.app.request("/v1/keys", {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "not-admin" }),
      })
    ).json()) as { key: string };
    expect((await signOutAll({ authorization: `Bearer ${key.key}` })).status).toBe(403);
    expect((await signOutAll({ cookie: first.cookie })).status).toBe(403); // no CSRF token
    expect(await live(first.cookie)).toBe(true);
    expect(await live(second.cookie)).toBe(true);

    const out = await signOutAll({ cookie: first.cookie, "x-csrf-token": first.csrfToken });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/mgw_console=;/);
    expect(await live(first.cookie)).toBe(false);
    expect(await live(second.cookie)).toBe(false);
    expect((await t.app.request("/console/session", { headers: { cookie: second.cookie } })).status).toBe(
      401,
    );

    // Another instance over the same table agrees; a new sign-in works; the admin token signs out too.
    const elsewhere = await createTestApp({ console: true, store: t.store });
    expect((await elsewhere.app.request("/v1/servers", { headers: { cookie: second.cookie } })).status).toBe(
      401,
    );
    const third = await signIn(elsewhere.app);
    expect(await live(third.cookie)).toBe(true);
    expect((await signOutAll({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })).status).toBe(204);
    expect(await live(third.cookie)).toBe(false);
  });

  it("the MCP endpoints take bearer tokens only, never the console's cookie", async () => {
    const { cookie, csrfToken } = await signIn(t.app);
    const response = await t.app.request("/mcp", {
      method: "POST",
      headers: {
        cookie,
        "x-csrf-token": csrfToken,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(response.status).toBe(401);
  });

  it("serves the console with a strict CSP, the page uncached and hashed assets immutable", async () => {
    const page = await t.app.request("/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toMatch(/script-src 'self'(;|$)/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1] ?? "");
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const path of assets) {
      expect(path).toMatch(/-[\w-]{8}\.(js|css)$/);
      const asset = await t.app.request(path);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(asset.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    }
    expect((await t.app.request("/assets/nothing-here.js")).status).toBe(404);
  });
});
