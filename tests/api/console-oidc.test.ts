/**
 * Console sign-in at the OpenID provider (panva's `oidc-provider` on 127.0.0.1), beside the admin
 * token: a member of the admin group (CONSOLE_ADMIN_GROUP) or a listed admin (CONSOLE_ADMINS, by sub or
 * verified email) gets the same session cookie the token gives; anyone else a page saying why, and no
 * session. Such a session lasts while the rule that admitted its person does. No code, token or the
 * client secret is logged or stored.
 */
import { createApp, OidcClient } from "@mcpgw/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OidcProvider, startOidcProvider } from "../fixtures/oidc-provider";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { scanTable } from "../support/aws";
import { CookieBrowser } from "../support/cookie-browser";
import { type Stack, startStack } from "../support/stack";

let op: OidcProvider;
let stack: Stack;
/** Codes seen in the browser's URLs. */
const seen: string[] = [];

beforeAll(async () => {
  op = await startOidcProvider({
    accounts: [
      { sub: "root-1", groups: ["gw-admins"] },
      { sub: "boss", email: "Boss@Example.com", groups: [] },
      { sub: "auth0|ada", email: "ada@example.com", groups: ["eng"] },
    ],
    // The other way to send the secret (the MCP sign-in test uses the default, basic).
    tokenAuthMethod: "client_secret_post",
  });
  stack = await startStack({
    oidc: { ...op.settings, admins: { group: "gw-admins", users: ["boss@example.com"] } },
  });
  op.register([`${stack.api.url}/console/oidc/callback`]);
});

afterAll(async () => {
  await stack?.stop();
  await op?.close();
});

describe("console admins sign in at the OpenID provider", () => {
  /** Signs in to the console as `sub`: the callback's answer and the browser. */
  async function consoleSignIn(sub: string) {
    op.signInAs(sub);
    const browser = new CookieBrowser();
    const { hops, last } = await browser.follow(`${stack.api.url}/console/oidc/start`, () => false);
    for (const hop of hops) {
      const code = hop.url.searchParams.get("code");
      if (code) seen.push(code);
    }
    return { browser, last };
  }

  it("the sign-in screen offers the provider", async () => {
    const response = await fetch(`${stack.api.url}/console/sign-in`);
    expect(await response.json()).toEqual({ provider: { name: "Fixture OP", url: "/console/oidc/start" } });
  });

  it("a member of the admin group gets a console session, as with the admin token", async () => {
    const { browser, last } = await consoleSignIn("root-1");
    const session = await browser.fetch(`${stack.api.url}/console/session`);
    const servers = await browser.fetch(`${stack.api.url}/v1/servers`);

    expect(last.url.pathname).toBe("/");
    expect(browser.cookies(stack.api.url).has("mgw_console")).toBe(true);
    expect(session.status).toBe(200);
    expect(await session.json()).toMatchObject({ csrfToken: expect.any(String) });
    expect(servers.status).toBe(200);
  });

  it("a listed admin, by verified email, is one too", async () => {
    const { browser } = await consoleSignIn("boss");
    expect((await browser.fetch(`${stack.api.url}/console/session`)).status).toBe(200);
  });

  it("a provider session lasts while the rule that admitted it does: not past a removed entry or a changed group", async () => {
    const [member, listed] = [await consoleSignIn("root-1"), await consoleSignIn("boss")];
    const cookieOf = (browser: CookieBrowser) =>
      `mgw_console=${browser.cookies(stack.api.url).get("mgw_console")}`;
    /** The stack restarted over the same table with `admins` (and `adminToken`): which cookies still work. */
    const workAfterRestart = async (
      admins: { group: string | undefined; users: string[] },
      adminToken = TEST_ADMIN_TOKEN,
    ) => {
      const app = createApp({
        store: stack.store,
        logger: stack.logger,
        adminToken,
        allowPrivateUpstreams: true,
        publicAdminUrl: stack.api.url,
        oidc: new OidcClient(op.settings),
        consoleAdmins: admins,
      });
      const works = async (browser: CookieBrowser) =>
        (await app.request("/v1/servers", { headers: { cookie: cookieOf(browser) } })).status === 200;
      return [await works(member.browser), await works(listed.browser)];
    };

    // A new admin token leaves provider sessions be; removing the entry ends that person's alone;
    // another admin group ends its members'.
    expect(
      await workAfterRestart({ group: "gw-admins", users: ["boss@example.com"] }, "rotated-9f2c"),
    ).toEqual([true, true]);
    expect(await workAfterRestart({ group: "gw-admins", users: [] })).toEqual([true, false]);
    expect(await workAfterRestart({ group: "other-admins", users: ["boss@example.com"] })).toEqual([
      false,
      true,
    ]);
  });

  it("a state the browser did not start is refused", async () => {
    const browser = new CookieBrowser();
    await browser.fetch(`${stack.api.url}/console/oidc/start`);
    const forged = await browser.fetch(`${stack.api.url}/console/oidc/callback?code=abc&state=forged`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain("started in another browser");
  });

  it("anyone else is refused with a page that says why, and gets no session", async () => {
    const { browser, last } = await consoleSignIn("auth0|ada");
    const html = await last.response.text();
    const session = await browser.fetch(`${stack.api.url}/console/session`);

    expect(last.response.status).toBe(403);
    expect(html).toContain("not an administrator");
    expect(html).toContain("auth0|ada");
    expect(browser.cookies(stack.api.url).has("mgw_console")).toBe(false);
    expect(session.status).toBe(401);
  });
});

describe("console sign-in without a provider", () => {
  it("offers the admin token alone", async () => {
    const plain = await startStack();
    try {
      const options = await fetch(`${plain.api.url}/console/sign-in`);
      const start = await fetch(`${plain.api.url}/console/oidc/start`, { redirect: "manual" });
      expect(await options.json()).toEqual({ provider: null });
      expect(start.status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});

describe("secrets of the console sign-in", () => {
  it("no code, provider token or the client secret is logged or stored", async () => {
    const secrets = [...new Set([...seen, ...op.issued])];
    const items = JSON.stringify(await scanTable(stack.store.config));
    const logs = stack.logs.join("\n");

    expect(secrets.length).toBeGreaterThan(3);
    for (const value of [...secrets, op.clientSecret]) {
      expect(items.includes(value), "a secret in a stored item").toBe(false);
      expect(logs.includes(value), "a secret in the logs").toBe(false);
    }
  });
});
