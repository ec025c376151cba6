/**
 * The OAuth authorization server end to end on the in-process stack (emulator KMS signing key): the
 * official SDK v2 client registers (DCR) or names a metadata document (CIMD), the test signs in on the
 * development page, the SDK finishes the exchange; then the tokens are checked against the JWKS and
 * every refusal the spec asks for. MCP calls with the tokens are the resource server's suite.
 */
import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import { TABLE_KEYS } from "@mcpgw/aws";
import { createGuardedFetch } from "@mcpgw/upstream";
import { auth, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../mcp/helpers";
import { scanTable } from "../support/aws";
import { formFields, signIn, TestProvider } from "../support/oauth-client";
import { type Stack, startStack } from "../support/stack";

const CIMD_URL = "https://client.test/cimd.json";
const REDIRECT = "http://127.0.0.1:9/callback";

let stack: Stack;
let docServerName: string;
let docServerId: string;
let otherServerName: string;
const cimdDocument: Record<string, unknown> = {
  client_id: CIMD_URL,
  client_name: "CIMD Test Client",
  redirect_uris: [REDIRECT],
  grant_types: ["authorization_code", "refresh_token"],
  token_endpoint_auth_method: "none",
};
let cimdFetches = 0;

beforeAll(async () => {
  const outbound = createGuardedFetch({ allowPrivate: true });
  stack = await startStack({
    oauth: true,
    fetch: (async (input, init) => {
      if (String(input) === CIMD_URL) {
        cimdFetches++;
        return Response.json(cimdDocument, { headers: { "cache-control": "no-store" } });
      }
      return outbound(input, init);
    }) as typeof fetch,
  });
  const suffix = randomBytes(3).toString("hex");
  docServerName = `docs-${suffix}`;
  otherServerName = `other-${suffix}`;
  const docs = await stack.call("POST", "/v1/servers", {
    name: docServerName,
    url: "http://127.0.0.1:9/mcp",
  });
  await stack.call("POST", "/v1/servers", { name: otherServerName, url: "http://127.0.0.1:9/mcp" });
  docServerId = docs.body.id;
  expect((await stack.call("PUT", "/v1/access/user:ada", { servers: [docServerName] })).status).toBe(200);
});

afterAll(() => stack?.stop());

const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));

/** A JWT's header and claims, its signature checked against GET /oauth/jwks. */
async function verifiedClaims(token: string) {
  const [header = "", payload = "", signature = ""] = token.split(".");
  const jwks = (await (await fetch(`${stack.api.url}/oauth/jwks`)).json()) as {
    keys: Array<{ kid: string }>;
  };
  const head = decode(header);
  const jwk = jwks.keys.find((key) => key.kid === head.kid);
  expect(jwk).toBeDefined();
  const key = createPublicKey({ key: jwk as never, format: "jwk" });
  const ok = verify(
    "sha256",
    Buffer.from(`${header}.${payload}`),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(signature, "base64url"),
  );
  expect(ok).toBe(true);
  return { header: head, claims: decode(payload) };
}

const form = (path: string, body: Record<string, string>) =>
  fetch(`${stack.api.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });

/** A DCR client and a code for `user` on `resource`, the flow driven by hand (PKCE of the test's own). */
async function manualCode(user = "ada", resource = `${stack.api.url}/mcp/${docServerName}`) {
  const registered = await fetch(`${stack.api.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      client_name: "manual",
      grant_types: ["authorization_code", "refresh_token"],
    }),
  });
  expect(registered.status).toBe(201);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(`${stack.api.url}/oauth/authorize`);
  const params = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource,
    state: "st",
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const { location } = await signIn(stack.api.url, url, user);
  return { clientId, verifier, resource, code: location.searchParams.get("code") ?? "", authorizeUrl: url };
}

const exchange = (c: Awaited<ReturnType<typeof manualCode>>, overrides: Record<string, string> = {}) =>
  form("/oauth/token", {
    grant_type: "authorization_code",
    code: c.code,
    code_verifier: c.verifier,
    redirect_uri: REDIRECT,
    client_id: c.clientId,
    resource: c.resource,
    ...overrides,
  });

describe("authorization server metadata and keys", () => {
  it("advertises the endpoints under the issuer, S256, CIMD and RFC 9207 iss; the JWKS is one P-256 key", async () => {
    const response = await fetch(`${stack.api.url}/.well-known/oauth-authorization-server`);
    const metadata = (await response.json()) as Record<string, unknown>;
    const jwks = (await (await fetch(`${stack.api.url}/oauth/jwks`)).json()) as {
      keys: Array<Record<string, unknown>>;
    };

    expect(metadata).toMatchObject({
      issuer: stack.api.url,
      authorization_endpoint: `${stack.api.url}/oauth/authorize`,
      token_endpoint: `${stack.api.url}/oauth/token`,
      registration_endpoint: `${stack.api.url}/oauth/register`,
      jwks_uri: `${stack.api.url}/oauth/jwks`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", kid: expect.any(String) });
    expect(jwks.keys[0]).not.toHaveProperty("d");
  });
});

describe("the SDK v2 client signs in", () => {
  it("by DCR: dev sign-in page, consent listing the mapped server, finishAuth; the token is for the exact resource", async () => {
    const serverUrl = `${stack.api.url}/mcp/${docServerName}`;
    const provider = new TestProvider(REDIRECT);

    expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
    expect(provider.info?.client_id).toMatch(/^mgwcl_/);
    const { first, signInHtml, consentHtml, location } = await signIn(
      stack.api.url,
      provider.authorizationUrl as URL,
      "ada",
    );

    // The pages: development sign-in, client name, redirect host, strict CSP, no script.
    const csp = first.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    expect(signInHtml).toMatch(/Development sign-in/);
    expect(signInHtml).toContain("gw-test");
    expect(signInHtml).toContain("127.0.0.1:9");
    expect(`${signInHtml}${consentHtml}`).not.toMatch(/<script|\son\w+=|style=/i);
    expect(consentHtml).toContain(`<li>${docServerName}</li>`);
    expect(consentHtml).not.toContain(otherServerName);
    expect(location.searchParams.get("iss")).toBe(stack.api.url);
    expect(location.searchParams.get("state")).toBe("s1");

    await new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }).finishAuth(
      location.searchParams,
    );

    const { header, claims } = await verifiedClaims(provider.tok?.access_token ?? "");
    expect(header).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(claims).toMatchObject({
      iss: stack.api.url,
      aud: serverUrl,
      sub: "ada",
      client_id: provider.info?.client_id,
      scope: "mcp",
      servers: [docServerId],
    });
    expect(claims.exp - claims.iat).toBe(600);
    expect(provider.tok?.refresh_token).toMatch(/^mgwr_/);
  });

  it("by CIMD: no registration, the document's name on the page, client_id the document URL", async () => {
    const serverUrl = `${stack.api.url}/mcp`;
    const provider = new TestProvider(REDIRECT, CIMD_URL);

    expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
    expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(CIMD_URL);
    const before = cimdFetches;
    const { signInHtml, location } = await signIn(stack.api.url, provider.authorizationUrl as URL, "ada");
    await new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }).finishAuth(
      location.searchParams,
    );

    expect(cimdFetches).toBeGreaterThan(before);
    expect(signInHtml).toContain("CIMD Test Client");
    const { claims } = await verifiedClaims(provider.tok?.access_token ?? "");
    expect(claims).toMatchObject({ aud: serverUrl, client_id: CIMD_URL, servers: [docServerId] });
  });

  it("refuses a CIMD document that names another client_id on a 400 page, without redirecting", async () => {
    const url = new URL(`${stack.api.url}/oauth/authorize`);
    url.searchParams.set("client_id", CIMD_URL);
    url.searchParams.set("redirect_uri", REDIRECT);
    cimdDocument.client_id = "https://client.test/other.json";
    try {
      const response = await fetch(url, { redirect: "manual" });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(await response.text()).toContain("names another client_id");
    } finally {
      cimdDocument.client_id = CIMD_URL;
    }
  });
});

describe("authorization refusals", () => {
  it("renders a 400 page for an unregistered redirect URI (off by a slash), never redirecting", async () => {
    const { authorizeUrl } = await manualCode();
    authorizeUrl.searchParams.set("redirect_uri", `${REDIRECT}/`);

    const response = await fetch(authorizeUrl, { redirect: "manual" });

    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });

  it("redirects with error, state and iss: no PKCE, an unknown resource", async () => {
    const { authorizeUrl } = await manualCode();
    const noPkce = new URL(authorizeUrl);
    noPkce.searchParams.delete("code_challenge");
    const foreign = new URL(authorizeUrl);
    foreign.searchParams.set("resource", "https://elsewhere.test/mcp");

    for (const [url, error] of [
      [noPkce, "invalid_request"],
      [foreign, "invalid_target"],
    ] as const) {
      const response = await fetch(url, { redirect: "manual" });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get("location") ?? "");
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(Object.fromEntries(location.searchParams)).toMatchObject({
        error,
        state: "st",
        iss: stack.api.url,
      });
    }
  });

  it("sends a malformed percent-escape in resource back as invalid_target, never a 500", async () => {
    const { authorizeUrl } = await manualCode();
    for (const resource of [`${stack.api.url}/mcp/%E0%A4%A`, "%E0%A4%A", `${stack.api.url}/mcp/%`]) {
      const url = new URL(authorizeUrl);
      url.searchParams.delete("resource");
      // Written raw: URLSearchParams would escape the bad escape's "%".
      const response = await fetch(`${url}&resource=${resource}`, { redirect: "manual" });
      expect(response.status, resource).toBe(302);
      const location = new URL(response.headers.get("location") ?? "");
      expect(location.origin + location.pathname).toBe(REDIRECT);
      expect(location.searchParams.get("error")).toBe("invalid_target");
    }
  });

  it("refuses a user with no mapping: the consent page says so, the answer is access_denied with iss", async () => {
    const provider = new TestProvider(REDIRECT);
    await auth(provider, { serverUrl: `${stack.api.url}/mcp` });

    const { consentHtml, location } = await signIn(
      stack.api.url,
      provider.authorizationUrl as URL,
      "nobody",
      "allow",
    );

    expect(consentHtml).toMatch(/access to no MCP server/);
    expect(consentHtml).not.toContain('value="allow"');
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      error: "access_denied",
      state: "s1",
      iss: stack.api.url,
    });
    expect(location.searchParams.get("code")).toBeNull();
  });

  it("refuses a consent post without the CSRF cookie", async () => {
    const { authorizeUrl } = await manualCode();
    const page = await fetch(authorizeUrl, { redirect: "manual" });
    const fields = formFields(await page.text());

    const response = await fetch(`${stack.api.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, user: "ada" }),
    });

    expect(response.status).toBe(403);
  });
});

describe("client registrations", () => {
  /** The stored client's TTL attribute (epoch seconds), as the table holds it. */
  const storedTtl = async (clientId: string) =>
    (await scanTable(stack.store.config)).find((item) => item.pk === `OAUTHCLIENT#${clientId}`)?.[
      TABLE_KEYS.ttl
    ];

  it("an unused registration expires after a day; one that obtains tokens lives 30 days from its last", async () => {
    const now = Math.floor(Date.now() / 1000);
    const day = 24 * 3600;
    const unused = await fetch(`${stack.api.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    const { client_id: unusedId } = (await unused.json()) as { client_id: string };
    expect(await storedTtl(unusedId)).toBeGreaterThanOrEqual(now + day);
    expect(await storedTtl(unusedId)).toBeLessThanOrEqual(now + day + 5);
    // Read-time check: gone once expired, whether or not the table has swept it.
    expect(await stack.store.oauth.client(unusedId, now + day + 6)).toBeUndefined();

    const code = await manualCode();
    expect((await exchange(code)).status).toBe(200);
    expect(await storedTtl(code.clientId)).toBeGreaterThanOrEqual(now + 30 * day);
    expect(await stack.store.oauth.client(code.clientId, now + day + 6)).toMatchObject({
      clientId: code.clientId,
    });
  });
});

describe("per-source limits (sources are loopback addresses)", () => {
  const register = (from: string) =>
    rawRequest(`${stack.api.url}/oauth/register`, {
      localAddress: from,
      body: { redirect_uris: [REDIRECT] },
    });

  it("registrations: 429 rate_limited (RFC 7591 error shape, Retry-After) past 20 a minute; another source registers", async () => {
    for (let i = 0; i < 20; i++) expect((await register("127.0.0.2")).status).toBe(201);
    const refused = await register("127.0.0.2");
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: "rate_limited", error_description: expect.any(String) });
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await register("127.0.0.3")).status).toBe(201);
  });

  it("authorization requests: a 429 page (Retry-After) past 60 a minute; another source is served", async () => {
    const authorize = (from: string) =>
      rawRequest(`${stack.api.url}/oauth/authorize?client_id=mgwcl_unknown&redirect_uri=${REDIRECT}`, {
        localAddress: from,
      });
    for (let i = 0; i < 60; i++) expect((await authorize("127.0.0.4")).status).toBe(400);
    const refused = await authorize("127.0.0.4");
    expect(refused.status).toBe(429);
    expect(refused.headers["content-type"]).toMatch(/^text\/html/);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await authorize("127.0.0.5")).status).toBe(400);
  });
});

describe("the token endpoint", () => {
  it("refuses a wrong verifier, redirect URI or resource (invalid_grant / invalid_target), no-store always", async () => {
    for (const [overrides, error] of [
      [{ code_verifier: randomBytes(32).toString("base64url") }, "invalid_grant"],
      [{ redirect_uri: "http://127.0.0.1:9/other" }, "invalid_grant"],
      [{ resource: `${stack.api.url}/mcp` }, "invalid_target"],
    ] as const) {
      const code = await manualCode();
      const response = await exchange(code, overrides);
      expect(response.status).toBe(400);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.json()).toMatchObject({ error });
    }
  });

  it("refuses a reused code and revokes what the code issued", async () => {
    const code = await manualCode();
    const first = await exchange(code);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const tokens = (await first.json()) as { refresh_token: string; token_type: string };
    expect(tokens.token_type).toBe("Bearer");

    const again = await exchange(code);
    const refreshed = await form("/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: code.clientId,
    });

    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_grant" });
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("rotates refresh tokens; reusing one revokes the family, the newest token too", async () => {
    const code = await manualCode();
    const { refresh_token: r1 } = (await (await exchange(code)).json()) as { refresh_token: string };
    const refresh = (token: string) =>
      form("/oauth/token", { grant_type: "refresh_token", refresh_token: token, client_id: code.clientId });

    const second = await refresh(r1);
    const body = (await second.json()) as { access_token: string; refresh_token: string };
    expect(second.status).toBe(200);
    expect(body.refresh_token).not.toBe(r1);
    expect((await verifiedClaims(body.access_token)).claims).toMatchObject({
      aud: code.resource,
      sub: "ada",
    });

    const reuse = await refresh(r1);
    const r2 = await refresh(body.refresh_token);

    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
    expect(await r2.json()).toMatchObject({ error: "invalid_grant" });
    expect(stack.logs.join("\n")).not.toContain(r1);
  });

  it("revokes a family at /oauth/revoke", async () => {
    const code = await manualCode();
    const { refresh_token: r1 } = (await (await exchange(code)).json()) as { refresh_token: string };

    const revoked = await form("/oauth/revoke", { token: r1, client_id: code.clientId });
    const refreshed = await form("/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: r1,
      client_id: code.clientId,
    });

    expect(revoked.status).toBe(200);
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  });
});

describe("access mappings (/v1/access)", () => {
  it("maps names to ids, lists them, deletes them; an unknown server is 404, a bad subject 400", async () => {
    const put = await stack.call("PUT", "/v1/access/group:eng", { servers: [otherServerName] });
    const listed = await stack.call("GET", "/v1/access");
    const unknown = await stack.call("PUT", "/v1/access/user:bob", { servers: ["no-such-server"] });
    const bad = await stack.call("PUT", "/v1/access/team:x", { servers: null });
    const removed = await stack.call("DELETE", "/v1/access/group:eng");
    const again = await stack.call("DELETE", "/v1/access/group:eng");

    expect(put.body).toMatchObject({ subject: "group:eng", servers: [otherServerName] });
    expect(put.body.serverIds).toHaveLength(1);
    expect(listed.body.access).toEqual(
      expect.arrayContaining([expect.objectContaining({ subject: "user:ada", serverIds: [docServerId] })]),
    );
    expect(unknown).toMatchObject({ status: 404, body: { code: "access.unknown_server" } });
    expect(bad.status).toBe(400);
    expect(removed.status).toBe(204);
    expect(again.status).toBe(404);
  });

  it("is admin only", async () => {
    const key = await stack.call("POST", "/v1/keys", { name: "client" });
    const response = await fetch(`${stack.api.url}/v1/access`, {
      headers: { authorization: `Bearer ${key.body.key}` },
    });
    expect(response.status).toBe(403);
  });
});
