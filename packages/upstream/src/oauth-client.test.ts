import { describe, expect, it } from "vitest";
import { needsRefresh, startUpstreamAuthorization, withBearer } from "./oauth-client";

const RS = "https://mcp.example.com";
const AS = "https://as.example.com";

/**
 * A fake upstream and AS: the resource answers 401 with its metadata URL (naming `prmResource`, by
 * default the resource's own URL); every request is recorded, and every registration's body.
 */
function fakeUpstream(asMetadata: Record<string, unknown>, prmResource = `${RS}/mcp`) {
  const requests: string[] = [];
  const registrations: Array<Record<string, unknown>> = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    requests.push(`${init?.method ?? "GET"} ${url.origin}${url.pathname}`);
    const json = (body: unknown, status = 200) =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    if (url.href === `${RS}/mcp`)
      return new Response(null, {
        status: 401,
        headers: { "www-authenticate": `Bearer resource_metadata="${RS}/prm", scope="read"` },
      });
    if (url.href === `${RS}/prm`) return json({ resource: prmResource, authorization_servers: [AS] });
    if (url.href === `${AS}/.well-known/oauth-authorization-server`)
      return json({
        issuer: AS,
        authorization_endpoint: `${AS}/authorize`,
        token_endpoint: `${AS}/token`,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
        ...asMetadata,
      });
    if (url.href === `${AS}/register`) registrations.push(JSON.parse(String(init?.body)));
    if (url.href === `${AS}/register`)
      return json(
        { ...JSON.parse(String(init?.body)), client_id: "registered", client_secret: "s3cret" },
        201,
      );
    return new Response("not found", { status: 404 });
  }) as typeof fetch;
  return { requests, registrations, fetchFn };
}

const start = (
  fetchFn: typeof fetch,
  extra: Partial<Parameters<typeof startUpstreamAuthorization>[0]> = {},
) =>
  startUpstreamAuthorization({
    url: `${RS}/mcp`,
    auth: { type: "oauth", mode: "shared" },
    redirectUri: "https://gw.example.com/oauth/upstream/callback",
    state: "st",
    clientMetadataUrl: "https://gw.example.com/oauth/client-metadata.json",
    fetch: fetchFn,
    ...extra,
  });

describe("starting an upstream authorization", () => {
  it("uses the gateway's CIMD URL as client_id when the AS supports it (no registration)", async () => {
    const { requests, fetchFn } = fakeUpstream({
      client_id_metadata_document_supported: true,
      registration_endpoint: `${AS}/register`,
    });
    const started = await start(fetchFn);
    const url = new URL(started.authorizationUrl);
    expect(url.searchParams.get("client_id")).toBe("https://gw.example.com/oauth/client-metadata.json");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toBe("st");
    expect(url.searchParams.get("resource")).toBe(`${RS}/mcp`);
    expect(url.searchParams.get("scope")).toBe("read"); // the 401's challenge
    expect(requests).not.toContain(`POST ${AS}/register`);
    expect(started.codeVerifier.length).toBeGreaterThanOrEqual(43);
  });

  it("registers dynamically when CIMD is not offered, or the gateway's URL is not https", async () => {
    const { requests, fetchFn } = fakeUpstream({ registration_endpoint: `${AS}/register` });
    const started = await start(fetchFn);
    expect(started.client).toEqual({
      client_id: "registered",
      client_secret: "s3cret",
      token_endpoint_auth_method: "none",
    });
    expect(requests).toContain(`POST ${AS}/register`);
    const insecure = fakeUpstream({
      client_id_metadata_document_supported: true,
      registration_endpoint: `${AS}/register`,
    });
    const plain = await start(insecure.fetchFn, {
      clientMetadataUrl: "http://127.0.0.1:1/oauth/client-metadata.json",
    });
    expect(plain.client.client_id).toBe("registered");
  });

  it("registers with the application_type SEP-837 asks for: web, native for a loopback redirect", async () => {
    const web = fakeUpstream({ registration_endpoint: `${AS}/register` });
    await start(web.fetchFn);
    expect(web.registrations).toEqual([expect.objectContaining({ application_type: "web" })]);
    const loopback = fakeUpstream({ registration_endpoint: `${AS}/register` });
    await start(loopback.fetchFn, { redirectUri: "http://127.0.0.1:8080/oauth/upstream/callback" });
    expect(loopback.registrations).toEqual([expect.objectContaining({ application_type: "native" })]);
  });

  it("sends the resource exactly as the protected-resource metadata names it (no '/' added)", async () => {
    const { fetchFn } = fakeUpstream({ registration_endpoint: `${AS}/register` }, RS);
    const started = await start(fetchFn);
    expect(new URL(started.authorizationUrl).searchParams.get("resource")).toBe(RS);
    expect(started.resource).toBe(RS);
  });

  it("refuses protected-resource metadata about another resource, before registering", async () => {
    const { requests, fetchFn } = fakeUpstream(
      { registration_endpoint: `${AS}/register` },
      "https://evil.example.com/mcp",
    );
    await expect(start(fetchFn)).rejects.toThrow(/is for https:\/\/evil\.example\.com\/mcp/);
    expect(requests).not.toContain(`POST ${AS}/register`);
  });

  it("falls back to the 2025-03-26 default endpoints when the server publishes no metadata at all", async () => {
    const requests: string[] = [];
    const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      requests.push(`${init?.method ?? "GET"} ${url.href}`);
      if (url.href === `${RS}/mcp`) return new Response(null, { status: 401 });
      if (url.href === `${RS}/register`)
        return new Response(JSON.stringify({ client_id: "legacy", redirect_uris: [] }), {
          status: 201,
          headers: { "content-type": "application/json" },
        });
      return new Response("not found", { status: 404 });
    }) as typeof fetch;
    const started = await start(fetchFn);
    expect(started.authorizationUrl.startsWith(`${RS}/authorize?`)).toBe(true);
    expect(started.client.client_id).toBe("legacy");
    expect(started.metadata).toMatchObject({ token_endpoint: `${RS}/token` });
    expect(requests).toContain(`POST ${RS}/register`);
  });

  it("uses the configured client id first; with none and no way to register, says so", async () => {
    const { requests, fetchFn } = fakeUpstream({ registration_endpoint: `${AS}/register` });
    const started = await start(fetchFn, {
      auth: { type: "oauth", mode: "shared", clientId: "pre", scopes: ["a", "b"] },
    });
    expect(started.client).toEqual({ client_id: "pre" });
    expect(new URL(started.authorizationUrl).searchParams.get("scope")).toBe("a b");
    expect(requests).not.toContain(`POST ${AS}/register`);
    await expect(start(fakeUpstream({}).fetchFn)).rejects.toThrow(/auth.clientId/);
  });

  it("keeps a confidential client's secret for the code exchange, never in the authorization URL", async () => {
    const { requests, fetchFn } = fakeUpstream({ registration_endpoint: `${AS}/register` });
    const started = await start(fetchFn, {
      auth: { type: "oauth", mode: "shared", clientId: "pre", clientSecret: "pre-s3cret" },
    });
    expect(started.client).toEqual({ client_id: "pre", client_secret: "pre-s3cret" });
    expect(started.authorizationUrl).not.toContain("pre-s3cret");
    expect(requests).not.toContain(`POST ${AS}/register`);
  });
});

describe("held credentials", () => {
  it("refreshes within the 2-minute margin, only with a refresh token", () => {
    const base = { authorizationServer: AS, client: { client_id: "c" }, accessToken: "a" };
    const soon = new Date(Date.now() + 60_000).toISOString();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    expect(needsRefresh({ ...base, refreshToken: "r", expiresAt: soon })).toBe(true);
    expect(needsRefresh({ ...base, refreshToken: "r", expiresAt: later })).toBe(false);
    expect(needsRefresh({ ...base, expiresAt: soon })).toBe(false);
    expect(needsRefresh({ ...base, refreshToken: "r" })).toBe(false);
  });

  it("puts the bearer in place of any configured Authorization header", () => {
    const target = { url: RS, headers: { Authorization: "Basic x", "x-k": "v" } };
    expect(withBearer(target, "tok").headers).toEqual({ "x-k": "v", authorization: "Bearer tok" });
  });
});
