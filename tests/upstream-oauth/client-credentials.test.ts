import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthUpstream, startOAuthUpstream } from "../fixtures/oauth-upstream";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { scanTable } from "../support/aws";
import { type Stack, startStack, waitFor } from "../support/stack";

describe("upstream auth by client credentials, and pre-registered confidential OAuth clients", () => {
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
  const whoami = (server: string) => call("POST", `/v1/tools/${server}__whoami/call`, { arguments: {} });
  const textOf = (result: { body: unknown }) => JSON.stringify(result.body);
  let machine: { clientId: string; clientSecret: string };
  let id = "";

  beforeAll(async () => {
    stack = await startStack();
    upstream = await startOAuthUpstream();
    machine = upstream.registerClient({ confidential: true });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  describe("auth: client_credentials", () => {
    it("register → connected with no human step: the grant's token, its expiry, the PRM's resource", async () => {
      // Act
      const created = await call("POST", "/v1/servers", {
        name: "machine",
        url: upstream.url,
        auth: { type: "client_credentials", ...machine, scopes: ["mcp"] },
      });

      // Assess
      expect(created.status).toBe(201);
      expect(created.body.auth).toEqual({
        type: "client_credentials",
        clientId: machine.clientId,
        clientSecret: "[SECRET]",
        scopes: ["mcp"],
      });
      id = created.body.id;
      const status = await waitFor(statusOf(id), (s) => s.state !== "connecting");
      expect(status).toMatchObject({ state: "connected", toolCount: 1, authorization: "authorized" });
      expect(Date.parse(status.credentialExpiresAt)).toBeGreaterThan(Date.now());
      expect(upstream.counts).toMatchObject({ authorize: 0, register: 0, clientCredentials: 1 });
      expect(upstream.tokenRequests.at(-1)).toEqual({
        grantType: "client_credentials",
        clientAuth: "basic",
        resource: upstream.url,
      });
    });

    it("a call reaches the upstream with the grant's token (whoami: the client)", async () => {
      // Act
      const result = await whoami("machine");

      // Assess
      expect(result.status).toBe(200);
      expect(textOf(result)).toContain(machine.clientId);
      expect(upstream.seen.at(-1)).toBe(upstream.secrets.accessTokens.at(-1));
    });

    it("the AS expires the token → a sweep obtains a new one by the grant → calls keep working", async () => {
      // Prepare
      const before = (await statusOf(id)()).credentialExpiresAt;
      const grants = upstream.counts.clientCredentials;
      upstream.expireAccessTokens();

      // Act
      await stack.sweep();

      // Assess
      await waitFor(
        () => Promise.resolve(upstream.counts.clientCredentials),
        (n) => n === grants + 1,
      );
      const status = await waitFor(statusOf(id), (s) => s.credentialExpiresAt !== before);
      expect(status).toMatchObject({ state: "connected", authorization: "authorized" });
      const result = await whoami("machine");
      expect(result.status).toBe(200);
      expect(textOf(result)).toContain(machine.clientId);
      expect(upstream.seen.at(-1)).toBe(upstream.secrets.accessTokens.at(-1));
    });

    it("a token expiring within the margin is replaced before the check", async () => {
      // Prepare: tokens of 60 s are under the 2-minute margin
      upstream.setAccessTokenSeconds(60);
      upstream.expireAccessTokens();
      await stack.sweep();
      const grants = await waitFor(
        () => Promise.resolve(upstream.counts.clientCredentials),
        (n) => n >= 3,
      );

      // Act
      await stack.sweep();

      // Assess
      await waitFor(
        () => Promise.resolve(upstream.counts.clientCredentials),
        (n) => n === grants + 1,
      );
      const status = await waitFor(statusOf(id), (s) => s.state === "connected");
      expect(Date.parse(status.credentialExpiresAt) - Date.now()).toBeLessThanOrEqual(60_000);

      // Long-lived tokens again (the next sweep replaces the short one)
      upstream.setAccessTokenSeconds(3600);
      await stack.sweep();
      await waitFor(statusOf(id), (s) => Date.parse(s.credentialExpiresAt) - Date.now() > 600_000);
    });

    it("PATCH with the masked secret sent back keeps it (and the token); new headers keep it too", async () => {
      // Prepare
      const server = (await call("GET", `/v1/servers/${id}`)).body;
      const held = await stack.store.upstreamCredentials.get(id, "shared");

      // Act
      const kept = await call("PATCH", `/v1/servers/${id}`, { auth: server.auth, timeoutSeconds: 20 });
      const withHeaders = await call("PATCH", `/v1/servers/${id}`, { headers: { "X-Trace": "on" } });

      // Assess
      expect(kept.status).toBe(200);
      expect(kept.body.auth.clientSecret).toBe("[SECRET]");
      expect(withHeaders.status).toBe(200);
      expect(await stack.store.upstreamCredentials.get(id, "shared")).toEqual(held);
      const opened = await stack.store.servers.get(id);
      expect(opened?.transport === "http" && opened.auth?.clientSecret).toBe(machine.clientSecret);
      const status = await waitFor(statusOf(id), (s) => s.state !== "connecting");
      expect(status).toMatchObject({ state: "connected", authorization: "authorized" });
    });

    it("a wrong secret → failed / access_denied, authorization refused, a clear error; the old token dropped", async () => {
      // Prepare
      const wrong = "wrong-secret-0123456789";
      const server = (await call("GET", `/v1/servers/${id}`)).body;

      // Act
      const patched = await call("PATCH", `/v1/servers/${id}`, {
        auth: { ...server.auth, clientSecret: wrong },
      });

      // Assess
      expect(patched.status).toBe(200);
      expect(await stack.store.upstreamCredentials.get(id, "shared")).toBeUndefined();
      // No handover: the old generation serving on would obtain a token with the old secret, for the server.
      expect((await stack.store.statuses.get(id))?.servingGeneration).toBeUndefined();
      const status = await waitFor(statusOf(id), (s) => s.state === "failed");
      expect(status).toMatchObject({
        reason: "access_denied",
        authorization: "refused",
        credentialExpiresAt: null,
      });
      expect(status.error).toContain("refused the client_credentials grant");
      expect(status.error).toContain("invalid_client");
      expect(status.error).toContain("auth.clientSecret");
      expect(status.error).not.toContain("/authorize");
      expect(JSON.stringify(status)).not.toContain(wrong);
      expect(stack.logs.join("\n")).not.toContain(wrong);
      const refused = await whoami("machine");
      expect(refused.status).toBeGreaterThanOrEqual(400);

      // The right secret again: connected
      const fixed = await call("PATCH", `/v1/servers/${id}`, {
        auth: { ...server.auth, clientSecret: machine.clientSecret },
      });
      expect(fixed.status).toBe(200);
      const back = await waitFor(statusOf(id), (s) => s.state === "connected");
      expect(back.authorization).toBe("authorized");
    });

    it("POST /v1/servers/{id}/authorize → 409 server.no_authorize_step (problem+json)", async () => {
      // Act
      const response = await fetch(`${stack.api.url}/v1/servers/${id}/authorize`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      const viaCall = await call("POST", `/v1/servers/${id}/authorize`);

      // Assess
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(viaCall.status).toBe(409);
      expect(viaCall.body.code).toBe("server.no_authorize_step");
      expect(viaCall.body.detail).toContain("client_credentials");
    });
  });

  describe("auth: oauth with a pre-registered confidential client (clientId + clientSecret)", () => {
    const callback = () => `${stack.api.url}/oauth/upstream/callback`;
    /** Authorizes the server: the admin opens the URL, the AS approves, the callback's page. */
    async function authorize(serverId: string) {
      const started = await call("POST", `/v1/servers/${serverId}/authorize`);
      expect(started.status).toBe(200);
      const authorizationUrl = new URL(started.body.authorizationUrl);
      const approved = await fetch(authorizationUrl, { redirect: "manual" });
      expect(approved.status).toBe(302);
      const page = await fetch(approved.headers.get("location") as string, { redirect: "manual" });
      const html = await page.text();
      seen.push(html);
      return { authorizationUrl, status: page.status, html };
    }

    it("the authorize flow uses the configured client, authenticated by its secret at the token endpoint", async () => {
      // Prepare
      const client = upstream.registerClient({ confidential: true, redirectUris: [callback()] });
      const registrations = upstream.counts.register;
      const created = await call("POST", "/v1/servers", {
        name: "confidential",
        url: upstream.url,
        auth: { type: "oauth", ...client },
      });
      expect(created.status).toBe(201);
      expect(created.body.auth).toEqual({
        type: "oauth",
        mode: "shared",
        clientId: client.clientId,
        clientSecret: "[SECRET]",
      });

      // Act
      const { authorizationUrl, status } = await authorize(created.body.id);

      // Assess
      expect(status).toBe(200);
      expect(authorizationUrl.searchParams.get("client_id")).toBe(client.clientId);
      expect(upstream.counts.register).toBe(registrations); // no dynamic registration
      expect(upstream.tokenRequests.at(-1)).toMatchObject({
        grantType: "authorization_code",
        clientAuth: "basic",
      });
      const connected = await waitFor(statusOf(created.body.id), (s) => s.state === "connected");
      expect(connected).toMatchObject({ authorization: "authorized", toolCount: 1 });
      const result = await whoami("confidential");
      expect(result.status).toBe(200);
      expect(textOf(result)).toContain("alice");
    });

    it("the same client without its secret: the AS refuses the code exchange (the secret is what it needs)", async () => {
      // Prepare
      const client = upstream.registerClient({ confidential: true, redirectUris: [callback()] });
      const created = await call("POST", "/v1/servers", {
        name: "public-attempt",
        url: upstream.url,
        auth: { type: "oauth", clientId: client.clientId },
        enabled: false,
      });

      // Act
      const { status, html } = await authorize(created.body.id);

      // Assess
      expect(status).toBe(400);
      expect(html).toContain("invalid_client");
    });
  });

  it("no client secret, token or code in the clear: list, reads, logs, table items", async () => {
    // Prepare
    const list = await call("GET", "/v1/servers");
    expect(list.status).toBe(200);
    const withSecrets = list.body.servers.filter((s: { name: string }) =>
      ["machine", "confidential"].includes(s.name),
    );
    expect(withSecrets.map((s: { auth: { clientSecret: string } }) => s.auth.clientSecret)).toEqual([
      "[SECRET]",
      "[SECRET]",
    ]);

    // Act
    const items = JSON.stringify(await scanTable(stack.store.config));

    // Assess
    expect(items).toContain("sealedAuth");
    expect(items).toContain("UPSTREAMCRED#");
    const everything = [...stack.logs, ...seen, items].join("\n");
    const secrets = Object.values(upstream.secrets).flat();
    expect(upstream.secrets.clientSecrets).toContain(machine.clientSecret);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});
