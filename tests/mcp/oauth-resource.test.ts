/**
 * `/mcp` and `/mcp/{server}` as OAuth protected resources (stack started with `oauth: true`): the SDK
 * v2 client with a user's access token lists and calls tools on the resource the token was issued for,
 * and sees only the user's servers; a token for another resource, an expired one, one of another
 * issuer or with a broken signature is 401 `invalid_token`; a server outside the user's servers is 403
 * `insufficient_scope`; no token is 401 pointing at the resource's metadata (RFC 9728), which answers.
 * API keys and the admin token keep working; with OAuth off nothing changes.
 */
import { createLocalTokenSigner } from "@mcpgw/aws";
import {
  Client,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  createConnected,
  type Stack,
  startGatewayStack,
  TEST_ADMIN_TOKEN,
  uniqueName,
} from "../gateway/helpers";
import { createTestApp } from "../support/app";
import { mintTestToken, type TestClaims } from "../support/oauth";
import { createKey } from "./helpers";

const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

describe("MCP endpoints as OAuth protected resources", () => {
  let stack: Stack;
  let upstreams: Upstream[];
  let issuer: string;
  const alpha = uniqueName("alpha");
  const beta = uniqueName("beta");
  let alphaId: string;

  /** A token of the stack's signer for `aud`, granting the user `alpha` only unless overridden. */
  const token = (aud: string, claims: Partial<TestClaims> = {}, header: Record<string, unknown> = {}) => {
    const oauth = stack.oauth;
    if (!oauth) throw new Error("the stack has no OAuth");
    return mintTestToken(oauth.signer, { iss: oauth.issuer, aud, servers: [alphaId], ...claims }, header);
  };
  const resource = (path: string) => `${issuer}${path}`;
  const metadataOf = (path: string) => `${issuer}/.well-known/oauth-protected-resource${path}`;

  /** The SDK v2 client on `path` with `bearer` (undefined: none) as its token. */
  const connect = async (path: string, bearer: string | undefined) => {
    const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(resource(path)), {
        authProvider: { token: async () => bearer },
      }),
    );
    return client;
  };

  /** A raw `tools/list` POST with `authorization` (none when undefined). */
  const post = (path: string, bearer: string | undefined) =>
    fetch(resource(path), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      },
      body: JSON.stringify(TOOLS_LIST),
    });

  /** Asserts a 401 invalid_token at `path` with that resource's challenge; returns the description. */
  const expectInvalidToken = async (
    expect: import("vitest").ExpectStatic,
    path: string,
    bearer: string,
  ): Promise<string | undefined> => {
    const response = await post(path, bearer);
    expect(response.status).toBe(401);
    const header = response.headers.get("www-authenticate") ?? "";
    expect(header).toMatch(
      new RegExp(
        `^Bearer resource_metadata="${metadataOf(path).replace(/[.]/g, "\\.")}", scope="mcp", error="invalid_token", error_description="[^"]+"$`,
      ),
    );
    expect(await response.json()).toMatchObject({ status: 401, code: "auth.invalid_token" });
    return extractWWWAuthenticateParams(new Response(null, { headers: { "www-authenticate": header } }))
      .errorDescription;
  };

  beforeAll(async () => {
    stack = await startGatewayStack({ oauth: true });
    issuer = stack.oauth?.issuer ?? "";
    upstreams = await Promise.all([1, 2].map((n) => startUpstream({ name: `oauth-upstream-${n}` })));
    [alphaId] = await Promise.all([
      createConnected(stack, { name: alpha, url: upstreams[0]?.url }),
      createConnected(stack, { name: beta, url: upstreams[1]?.url }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.allSettled((upstreams ?? []).map((upstream) => upstream.close()));
  });

  it("the issuer is the stack's own origin", ({ expect }) => {
    expect(issuer).toBe(stack.api.url);
  });

  it("SDK v2 with a token for /mcp/{server}: lists and calls that server's tools", async ({ expect }) => {
    const client = await connect(`/mcp/${alpha}`, await token(resource(`/mcp/${alpha}`)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "echo", "fail", "slow"]);
      const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(result).toMatchObject({ content: [{ type: "text", text: "hi" }] });
    } finally {
      await client.close();
    }
  });

  it("SDK v2 with a token for /mcp: only the user's servers are visible and callable", async ({ expect }) => {
    const client = await connect("/mcp", await token(resource("/mcp")));
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain(`${alpha}__echo`);
      expect(names.every((name) => name.startsWith(`${alpha}__`))).toBe(true);
      const result = await client.callTool({ name: `${alpha}__echo`, arguments: { text: "agg" } });
      expect(result).toMatchObject({ content: [{ type: "text", text: "agg" }] });
      // Another server's tool reads as no server at all, as for a scoped key.
      await expect(
        client.callTool({ name: `${beta}__echo`, arguments: { text: "no" } }),
      ).rejects.toMatchObject({
        code: -32602,
        data: { code: "server.not_found" },
      });
    } finally {
      await client.close();
    }
  });

  it("a user with every server (servers: null) sees them all on /mcp", async ({ expect }) => {
    const client = await connect("/mcp", await token(resource("/mcp"), { servers: null }));
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining([`${alpha}__echo`, `${beta}__echo`]));
    } finally {
      await client.close();
    }
  });

  it("a token is good at its own resource only: elsewhere 401 invalid_token with that resource's metadata", async ({
    expect,
  }) => {
    const forAlpha = await token(resource(`/mcp/${alpha}`));
    expect(await expectInvalidToken(expect, `/mcp/${beta}`, forAlpha)).toBe("token is for another resource");
    expect(await expectInvalidToken(expect, "/mcp", forAlpha)).toBe("token is for another resource");
    const forAll = await token(resource("/mcp"));
    expect(await expectInvalidToken(expect, `/mcp/${alpha}`, forAll)).toBe("token is for another resource");
  });

  it("expired, wrong issuer, tampered signature, unknown key, garbage → 401 invalid_token each", async ({
    expect,
  }) => {
    const path = `/mcp/${alpha}`;
    const now = Math.floor(Date.now() / 1000);
    const expired = await token(resource(path), { iat: now - 1_000, exp: now - 400 });
    expect(await expectInvalidToken(expect, path, expired)).toBe("token expired");
    const foreign = await token(resource(path), { iss: "https://elsewhere.example.com" });
    expect(await expectInvalidToken(expect, path, foreign)).toBe("wrong issuer");
    const good = await token(resource(path));
    const tampered = `${good.slice(0, -6)}${good.slice(-6) === "AAAAAA" ? "BBBBBB" : "AAAAAA"}`;
    expect(await expectInvalidToken(expect, path, tampered)).toBe("bad signature");
    const otherKey = await mintTestToken(createLocalTokenSigner(), { iss: issuer, aud: resource(path) });
    expect(await expectInvalidToken(expect, path, otherKey)).toBe("unknown key");
    expect(await expectInvalidToken(expect, path, "not-a-token")).toBe("not a JWT");
    expect(await expectInvalidToken(expect, path, "mgw_unknown")).toBe("unknown or revoked API key");
  });

  it("the SDK client with a refused token fails to connect (UnauthorizedError)", async ({ expect }) => {
    const forAlpha = await token(resource(`/mcp/${alpha}`));
    await expect(connect(`/mcp/${beta}`, forAlpha)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("a server outside the user's servers → 403 insufficient_scope", async ({ expect }) => {
    const path = `/mcp/${beta}`;
    const response = await post(path, await token(resource(path)));
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="mcp", resource_metadata="${metadataOf(path)}"`,
    );
    expect(await response.json()).toMatchObject({ status: 403, code: "auth.insufficient_scope" });
  });

  it("a token without the mcp scope → 403 insufficient_scope", async ({ expect }) => {
    const path = `/mcp/${alpha}`;
    const response = await post(path, await token(resource(path), { scope: "other" }));
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });

  it("an unknown server with a token for it stays 404", async ({ expect }) => {
    const path = "/mcp/no-such-server";
    const response = await post(path, await token(resource(path), { servers: null }));
    expect(response.status).toBe(404);
  });

  it("no token → 401 naming the resource's metadata, which the SDK's discovery then reads (200)", async ({
    expect,
  }) => {
    for (const path of ["/mcp", `/mcp/${alpha}`]) {
      const response = await post(path, undefined);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe(
        `Bearer resource_metadata="${metadataOf(path)}", scope="mcp"`,
      );
      expect(await response.json()).toMatchObject({ status: 401, code: "auth.unauthorized" });
      const { resourceMetadataUrl, scope, error } = extractWWWAuthenticateParams(response);
      expect({ url: resourceMetadataUrl?.href, scope, error }).toEqual({
        url: metadataOf(path),
        scope: "mcp",
        error: undefined,
      });
      const raw = await fetch(metadataOf(path));
      expect(raw.status).toBe(200);
      expect(raw.headers.get("access-control-allow-origin")).toBe("*");
      const metadata = await discoverOAuthProtectedResourceMetadata(resource(path), {
        resourceMetadataUrl: metadataOf(path),
      });
      expect(metadata).toEqual({
        resource: resource(path),
        authorization_servers: [issuer],
        scopes_supported: ["mcp"],
        bearer_methods_supported: ["header"],
        resource_name: expect.any(String),
      });
    }
    await expect(connect(`/mcp/${alpha}`, undefined)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("the metadata of an unknown server is 404; both metadata routes are in the OpenAPI document", async ({
    expect,
  }) => {
    const response = await fetch(metadataOf("/mcp/no-such-server"));
    expect(response.status).toBe(404);
    const doc = (await (await fetch(`${issuer}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/mcp/{server}",
      ]),
    );
  });

  it("a name too long to be a server's has no metadata either: 404 problem+json, as documented", async ({
    expect,
  }) => {
    const response = await fetch(metadataOf(`/mcp/${"a".repeat(65)}`));
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(((await response.json()) as { code: string }).code).toBe("server.not_found");
  });

  it("API keys and the admin token keep working on /mcp and /mcp/{server}", async ({ expect }) => {
    const key = await createKey(stack, "oauth-era key", [alpha]);
    const client = await connect(`/mcp/${alpha}`, key.key);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("echo");
    } finally {
      await client.close();
    }
    expect((await post(`/mcp/${beta}`, key.key)).status).toBe(404);
    expect((await post("/mcp", TEST_ADMIN_TOKEN)).status).toBe(200);
  });

  it("REST routes take no access token", async ({ expect }) => {
    const response = await fetch(`${issuer}/v1/tools`, {
      headers: { authorization: `Bearer ${await token(resource("/mcp"), { servers: null })}` },
    });
    expect(response.status).toBe(401);
  });
});

describe("OAuth off", () => {
  it("/mcp answers as before: the plain challenge, no metadata routes", async ({ expect }) => {
    const { app } = await createTestApp();
    const signer = createLocalTokenSigner();
    const jwt = await mintTestToken(signer, { iss: "http://localhost", aud: "http://localhost/mcp" });
    for (const authorization of [undefined, `Bearer ${jwt}`]) {
      const response = await app.request("/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(TOOLS_LIST),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe('Bearer realm="mcp-gateway"');
      expect(await response.json()).toMatchObject({ code: "auth.unauthorized" });
    }
    expect((await app.request("/.well-known/oauth-protected-resource/mcp")).status).toBe(404);
  });
});
