/**
 * People sign in at a real OpenID provider (panva's `oidc-provider`, on 127.0.0.1): the SDK v2 MCP
 * client is sent there by the gateway's authorization endpoint, comes back through the gateway's
 * callback (code exchanged, ID token verified), consents, and reaches exactly the servers its user
 * (`sub`) and its provider groups are mapped to. No code, token or the client secret is logged, stored
 * or answered. (Console sign-in at the provider: tests/api/console-oidc.test.ts.)
 */
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type OidcProvider, startOidcProvider } from "../fixtures/oidc-provider";
import { scanTable } from "../support/aws";
import { CookieBrowser } from "../support/cookie-browser";
import { formFields, TestProvider } from "../support/oauth-client";
import { reaches } from "../support/servers";
import { type Stack, startStack } from "../support/stack";

const REDIRECT = "http://127.0.0.1:9/callback";

let op: OidcProvider;
let stack: Stack;
const upstreams: Upstream[] = [];
/** Every secret a test saw go by: codes, tokens, verifiers. */
const seen: string[] = [];

/** Signs an SDK client in to `url` as the provider's account `sub`, through the whole flow. */
async function signInThroughProvider(url: URL, sub: string) {
  op.signInAs(sub);
  const provider = new TestProvider(REDIRECT);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(new Client({ name: "oidc-test", version: "1" }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  const browser = new CookieBrowser();
  const { hops, last } = await browser.follow(
    provider.authorizationUrl as URL,
    (at) => at.origin === new URL(REDIRECT).origin,
  );
  const consentHtml = await last.response.text();
  expect(last.response.status, consentHtml).toBe(200);
  const done = await browser.fetch(`${stack.api.url}/oauth/authorize`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: stack.api.url },
    body: new URLSearchParams({ ...formFields(consentHtml), decision: "allow" }),
  });
  const location = new URL(done.headers.get("location") ?? "");
  expect(location.origin).toBe(new URL(REDIRECT).origin);
  await first.finishAuth(location.searchParams);
  const client = new Client({ name: "oidc-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  seen.push(
    location.searchParams.get("code") ?? "",
    await provider.codeVerifier(),
    provider.tok?.access_token ?? "",
    provider.tok?.refresh_token ?? "",
    ...hops.flatMap((hop) =>
      [...hop.url.searchParams.entries()].filter(([name]) => name === "code").map(([, v]) => v),
    ),
  );
  return { client, hops, consentHtml };
}

beforeAll(async () => {
  op = await startOidcProvider({
    accounts: [
      { sub: "auth0|ada", email: "ada@example.com", name: "Ada Lovelace", groups: ["eng"] },
      { sub: "bob-7", groups: ["billing team"] },
      { sub: "eve", groups: [] },
    ],
  });
  stack = await startStack({
    oauth: true,
    oidc: op.settings,
  });
  op.register([`${stack.api.url}/oauth/oidc/callback`]);
  for (const name of ["docs", "ops", "billing"]) {
    const upstream = await startUpstream({ name });
    upstreams.push(upstream);
    const created = await stack.call("POST", "/v1/servers", { name, url: upstream.url });
    await reaches(stack, created.body.id, "connected");
  }
  // A sub with '|' (Auth0's form) and a group name with a space map like any other.
  expect((await stack.call("PUT", "/v1/access/user:auth0%7Cada", { servers: ["docs"] })).status).toBe(200);
  expect((await stack.call("PUT", "/v1/access/group:eng", { servers: ["ops"] })).status).toBe(200);
  expect((await stack.call("PUT", "/v1/access/group:billing%20team", { servers: ["billing"] })).status).toBe(
    200,
  );
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await op?.close();
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

describe("MCP clients sign in at the OpenID provider", () => {
  it("the authorization endpoint sends the browser to the provider with PKCE, state and nonce", async () => {
    const provider = new TestProvider(REDIRECT);
    await expect(
      new Client({ name: "oidc-test", version: "1" }).connect(
        new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), { authProvider: provider }),
      ),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const response = await new CookieBrowser().fetch(provider.authorizationUrl as URL);
    const target = new URL(response.headers.get("location") ?? "");

    expect(response.status).toBe(302);
    expect(`${target.origin}${target.pathname}`).toBe(`${op.issuer}/auth`);
    expect(Object.fromEntries(target.searchParams)).toMatchObject({
      client_id: op.clientId,
      redirect_uri: `${stack.api.url}/oauth/oidc/callback`,
      scope: "openid email profile",
      code_challenge_method: "S256",
    });
    expect(target.searchParams.get("nonce")).toBeTruthy();
    expect(response.headers.get("set-cookie")).toMatch(/mgw_oauth_login=.*HttpOnly.*SameSite=Lax/i);
  });

  it("a user reaches the union of their sub's and their groups' servers, and nothing else", async () => {
    const { client, consentHtml } = await signInThroughProvider(new URL(`${stack.api.url}/mcp`), "auth0|ada");
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    await client.close();

    expect(consentHtml).toContain("Ada Lovelace");
    expect(consentHtml).toContain("auth0|ada");
    expect(consentHtml).toContain("Fixture OP");
    expect(names).toContain("docs__echo");
    expect(names).toContain("ops__echo");
    expect(names.some((name) => name.startsWith("billing__"))).toBe(false);
  });

  it("another user, by their group alone, reaches its server and calls its tools", async () => {
    const { client } = await signInThroughProvider(new URL(`${stack.api.url}/mcp/billing`), "bob-7");
    const result = await client.callTool({ name: "echo", arguments: { text: "via the provider" } });
    await client.close();

    expect(JSON.stringify(result.content)).toContain("via the provider");
  });

  it("a user mapped to nothing is told so on the consent page, which names their sub", async () => {
    op.signInAs("eve");
    const provider = new TestProvider(REDIRECT);
    await new Client({ name: "oidc-test", version: "1" })
      .connect(new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), { authProvider: provider }))
      .catch(() => undefined);
    const { last } = await new CookieBrowser().follow(provider.authorizationUrl as URL, () => false);
    const html = await last.response.text();

    expect(html).toContain("You have access to no MCP server");
    expect(html).toContain("PUT /v1/access/user:eve");
    expect(html).not.toContain('value="allow"');
  });

  it("the development sign-in is off, and a callback without its browser's cookie or replayed is refused", async () => {
    const devPost = await fetch(`${stack.api.url}/oauth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ step: "signin", tx: "x", csrf: "y", user: "root" }),
    });
    const noCookie = await fetch(`${stack.api.url}/oauth/oidc/callback?code=abc&state=def`);

    op.signInAs("bob-7");
    const provider = new TestProvider(REDIRECT);
    await new Client({ name: "oidc-test", version: "1" })
      .connect(new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), { authProvider: provider }))
      .catch(() => undefined);
    const browser = new CookieBrowser();
    const { hops } = await browser.follow(provider.authorizationUrl as URL, () => false);
    const callback = hops.find((hop) => hop.url.pathname === "/oauth/oidc/callback");
    // Another browser (no login cookie) replays the same callback URL.
    const replayed = await new CookieBrowser().fetch(callback?.url ?? "");

    expect(devPost.status).toBeGreaterThanOrEqual(400);
    expect(noCookie.status).toBe(400);
    expect(await noCookie.text()).toContain("started in another browser");
    expect(callback?.response.status).toBe(200);
    expect(replayed.status).toBe(400);
  });
});

describe("secrets of the sign-in", () => {
  it("no code, token, verifier or the client secret is logged, stored or answered", async () => {
    const { consentHtml, hops } = await signInThroughProvider(
      new URL(`${stack.api.url}/mcp/docs`),
      "auth0|ada",
    );
    const answered = [consentHtml, ...hops.map((hop) => hop.response.headers.get("location") ?? "")].join(
      "\n",
    );
    const secrets = [...new Set([...seen, ...op.issued])].filter((value) => value.length > 0);
    const items = JSON.stringify(await scanTable(stack.store.config));
    const logs = stack.logs.join("\n");

    expect(op.issued.length).toBeGreaterThan(4);
    expect(logs).not.toContain(op.clientSecret);
    expect(items).not.toContain(op.clientSecret);
    expect(answered).not.toContain(op.clientSecret);
    for (const token of op.issued.filter((value) => value.includes("."))) {
      expect(answered.includes(token), "a provider token in a gateway answer").toBe(false);
    }
    for (const value of secrets) {
      expect(value.length).toBeGreaterThan(15);
      expect(items.includes(value), "a secret in a stored item").toBe(false);
      expect(logs.includes(value), "a secret in the logs").toBe(false);
      // A JWT's signature alone (the provider's opaque codes may hold dots too: only JWTs are split).
      const parts = value.split(".");
      const tail = parts.length === 3 && (parts[2] ?? "").length > 20 ? (parts[2] ?? value) : value;
      expect(items.includes(tail) || logs.includes(tail), "a token's signature").toBe(false);
    }
  });
});
