import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthUpstream, startOAuthUpstream } from "../fixtures/oauth-upstream";
import { scanTable } from "../support/aws";
import { type Stack, startStack, waitFor } from "../support/stack";

describe("upstream OAuth, shared mode: the gateway is an OAuth client of the server it fronts", () => {
  let stack: Stack;
  let upstream: OAuthUpstream;
  /** Every API response body (and callback page) the test saw, to look for secrets in. */
  const seen: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await stack.call(method, path, body);
    seen.push(JSON.stringify(response.body ?? null));
    return response;
  };
  const statusOf = (id: string) => async () => (await call("GET", `/v1/servers/${id}`)).body.status;
  const whoami = () => call("POST", "/v1/tools/guarded__whoami/call", { arguments: {} });
  let id = "";

  beforeAll(async () => {
    stack = await startStack();
    upstream = await startOAuthUpstream();
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("register → access_denied with authorization required (no credential yet)", async () => {
    const created = await call("POST", "/v1/servers", {
      name: "guarded",
      url: upstream.url,
      auth: { type: "oauth", mode: "shared" },
    });
    expect(created.status).toBe(201);
    expect(created.body.auth).toEqual({ type: "oauth", mode: "shared" });
    id = created.body.id;
    const status = await waitFor(statusOf(id), (s) => s.state === "failed");
    expect(status).toMatchObject({
      reason: "access_denied",
      authorization: "required",
      credentialExpiresAt: null,
    });
    expect(status.error).toContain(`POST /v1/servers/${id}/authorize`);
  });

  it("authorize → the admin opens the URL → the callback → connected, with the credential's expiry", async () => {
    const started = await call("POST", `/v1/servers/${id}/authorize`);
    expect(started.status).toBe(200);
    const authorizationUrl = new URL(started.body.authorizationUrl);
    expect(authorizationUrl.origin).toBe(upstream.origin);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("redirect_uri")).toBe(
      `${stack.api.url}/oauth/upstream/callback`,
    );
    expect(upstream.counts.register).toBe(1); // dynamic registration (no CIMD: the admin URL is http)

    const approved = await fetch(authorizationUrl, { redirect: "manual" });
    expect(approved.status).toBe(302);
    const callback = new URL(approved.headers.get("location") as string);
    expect(callback.origin + callback.pathname).toBe(`${stack.api.url}/oauth/upstream/callback`);
    const page = await fetch(callback, { redirect: "manual" });
    const html = await page.text();
    seen.push(html);
    expect(page.status).toBe(200);
    expect(html).toContain("authorized");
    // The state is single use.
    const again = await fetch(callback, { redirect: "manual" });
    seen.push(await again.text());
    expect(again.status).toBe(400);

    const status = await waitFor(statusOf(id), (s) => s.state === "connected");
    expect(status).toMatchObject({ authorization: "authorized", toolCount: 1 });
    expect(Date.parse(status.credentialExpiresAt)).toBeGreaterThan(Date.now());
  });

  it("a REST tool call reaches the upstream with the gateway's token", async () => {
    const result = await whoami();
    expect(result.status).toBe(200);
    expect(JSON.stringify(result.body)).toContain("alice");
    expect(upstream.seen.at(-1)).toBe(upstream.secrets.accessTokens.at(-1));
  });

  it("the AS expires the token → a sweep refreshes it → calls keep working", async () => {
    const before = (await statusOf(id)()).credentialExpiresAt;
    upstream.expireAccessTokens();
    expect(await stack.sweep()).toBe(1);
    await waitFor(
      () => Promise.resolve(upstream.counts.refresh),
      (n) => n === 1,
    );
    const status = await waitFor(statusOf(id), (s) => s.credentialExpiresAt !== before);
    expect(status).toMatchObject({ state: "connected", authorization: "authorized" });
    const result = await whoami();
    expect(result.status).toBe(200);
    expect(JSON.stringify(result.body)).toContain("alice");
    expect(upstream.seen.at(-1)).toBe(upstream.secrets.accessTokens.at(-1));
  });

  it("a token expiring within the margin is refreshed before the check", async () => {
    upstream.setAccessTokenSeconds(60); // under the 2-minute margin: the next sweep refreshes first
    upstream.expireAccessTokens();
    await stack.sweep();
    await waitFor(
      () => Promise.resolve(upstream.counts.refresh),
      (n) => n === 2,
    );
    const refreshes = upstream.counts.refresh;
    await stack.sweep(); // expires within the margin: refreshed before probing
    await waitFor(
      () => Promise.resolve(upstream.counts.refresh),
      (n) => n === refreshes + 1,
    );
    const status = await waitFor(statusOf(id), (s) => s.state === "connected");
    expect(Date.parse(status.credentialExpiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    upstream.setAccessTokenSeconds(3600);
  });

  it("the AS revokes → within one sweep the status says authorization required", async () => {
    upstream.revokeAll();
    await stack.sweep();
    const status = await waitFor(statusOf(id), (s) => s.state === "failed");
    expect(status).toMatchObject({ reason: "access_denied", authorization: "required" });
    expect(status.error).toContain(`POST /v1/servers/${id}/authorize`);
    const refused = await whoami();
    expect(refused.status).toBeGreaterThanOrEqual(400);
  });

  it("no token, code or secret in the clear: logs, responses, table items", async () => {
    const items = JSON.stringify(await scanTable(stack.store.config));
    expect(items).toContain("UPSTREAMCRED#");
    const everything = [...stack.logs, ...seen, items].join("\n");
    const secrets = Object.values(upstream.secrets).flat();
    expect(secrets.length).toBeGreaterThan(5);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });

  it("deleting the server deletes its sealed tokens", async () => {
    expect(await stack.store.upstreamCredentials.get(id, "shared")).toBeDefined();
    expect((await call("DELETE", `/v1/servers/${id}`)).status).toBe(204);
    expect(await stack.store.upstreamCredentials.get(id, "shared")).toBeUndefined();
    expect(JSON.stringify(await scanTable(stack.store.config))).not.toContain("UPSTREAMCRED#");
  });
  it("an edit that changes the auth (mode, client, URL) drops the tokens; other edits keep them", async () => {
    const other = await call("POST", "/v1/servers", {
      name: "guarded-edit",
      url: upstream.url,
      auth: { type: "oauth" },
      enabled: false,
    });
    expect(other.status).toBe(201);
    const otherId = other.body.id as string;
    const held = {
      authorizationServer: upstream.origin,
      client: { client_id: "c" },
      accessToken: "edit-test-token",
    };
    await stack.store.upstreamCredentials.put(otherId, "shared", held);
    expect((await call("PATCH", `/v1/servers/${otherId}`, { timeoutSeconds: 20 })).status).toBe(200);
    expect(await stack.store.upstreamCredentials.get(otherId, "shared")).toBeDefined();
    const switched = await call("PATCH", `/v1/servers/${otherId}`, {
      auth: { type: "oauth", clientId: "pre-registered" },
    });
    expect(switched.status).toBe(200);
    expect(await stack.store.upstreamCredentials.get(otherId, "shared")).toBeUndefined();
    await stack.store.upstreamCredentials.put(otherId, "shared", held);
    expect((await call("PATCH", `/v1/servers/${otherId}`, { auth: null })).status).toBe(200);
    expect(await stack.store.upstreamCredentials.get(otherId, "shared")).toBeUndefined();
    expect((await call("POST", `/v1/servers/${otherId}/authorize`)).status).toBe(409);
  });
});
