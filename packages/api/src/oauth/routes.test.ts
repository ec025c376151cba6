import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createAdminApp } from "../admin-app";
import type { AppDeps } from "../app-base";
import { createGatewayApp } from "../gateway-app";
import { memoryProvider } from "../oidc/memory-provider";
import { OidcClient } from "../oidc/provider";
import { createLocalTokenSigner } from "./signer";

const ISSUER = "https://gw.example";

function deps(oauth: boolean, devSignIn = true): AppDeps {
  return {
    store: createMemoryStore(),
    logger: createLogger({ level: "error", sink: () => {} }),
    adminToken: "unit-admin-token-oauth",
    allowPrivateUpstreams: false,
    ...(oauth ? { oauth: { issuer: ISSUER, signer: createLocalTokenSigner(), devSignIn } } : {}),
  };
}

describe("the authorization server's routes", () => {
  it("are served by the gateway function's app when OAuth is configured, and only then", async () => {
    const on = await createGatewayApp(deps(true)).request("/.well-known/oauth-authorization-server");
    const off = await createGatewayApp(deps(false)).request("/.well-known/oauth-authorization-server");
    const admin = await createAdminApp(deps(true)).request("/.well-known/oauth-authorization-server");

    expect(on.status).toBe(200);
    expect(await on.json()).toMatchObject({ issuer: ISSUER, token_endpoint: `${ISSUER}/oauth/token` });
    expect(off.status).toBe(404);
    expect(admin.status).toBe(404);
  });

  it("answers the token endpoint in RFC 6749 JSON with no-store", async () => {
    const app = createGatewayApp(deps(true));

    const response = await app.request("/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "password", client_id: "x" }),
    });

    expect(response.status).toBe(400);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toMatchObject({ error: "unsupported_grant_type" });
  });

  it("shows no sign-in page when the development sign-in is off", async () => {
    const response = await createGatewayApp(deps(true, false)).request("/oauth/authorize?client_id=x");

    expect(response.status).toBe(503);
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("refuses registration of a non-loopback http redirect URI", async () => {
    const response = await createGatewayApp(deps(true)).request("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://evil.example/cb"] }),
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_redirect_uri" });
  });
});

describe("sign-in at the OpenID provider", () => {
  const CLIENT_REDIRECT = "http://127.0.0.1:9/cb";

  /** A gateway whose provider is in memory, a registered client, and an authorization sent to the provider. */
  async function startSignIn() {
    const op = await memoryProvider();
    const app = createGatewayApp({ ...deps(true), oidc: new OidcClient(op.settings, op.fetch) });
    const registered = await app.request("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [CLIENT_REDIRECT] }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const authorize = await app.request(
      `/oauth/authorize?${new URLSearchParams({
        response_type: "code",
        client_id,
        redirect_uri: CLIENT_REDIRECT,
        code_challenge: "a".repeat(43),
        code_challenge_method: "S256",
        resource: `${ISSUER}/mcp`,
        state: "client-state",
      })}`,
    );
    const target = new URL(authorize.headers.get("location") ?? "");
    op.expectNonce(target.searchParams.get("nonce") ?? "");
    const cookie = (authorize.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const callback = () =>
      app.request(`/oauth/oidc/callback?code=c0de&state=${target.searchParams.get("state")}`, {
        headers: { cookie },
      });
    return { op, authorize, target, callback };
  }

  it("sends the browser to the provider, and shows consent once its ID token checks out", async () => {
    const { authorize, target, callback } = await startSignIn();
    const consent = await callback();
    const html = await consent.text();

    expect(authorize.status).toBe(302);
    expect(target.origin).toBe("https://op.example");
    expect(authorize.headers.get("set-cookie")).toMatch(
      /^mgw_oauth_login=.*Path=\/oauth\/oidc\/callback.*HttpOnly.*Secure.*SameSite=Lax/,
    );
    expect(consent.status).toBe(200);
    expect(html).toContain('name="tx"');
    expect(html).toContain("auth0|ada");
    expect(html).toContain("Example");
  });

  it.each([
    ["a tampered ID token", { tamper: true }, /signature/i],
    ["a wrong nonce", { wrongNonce: true }, /nonce/],
    ["another issuer", { claims: { iss: "https://evil.example" } }, /iss/],
    ["another audience", { claims: { aud: "someone-else" } }, /aud/],
  ])("answers %s with a page saying what failed, and no consent", async (_name, change, detail) => {
    const { op, callback } = await startSignIn();
    op.change(change);
    const refused = await callback();
    const html = await refused.text();

    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(html).toContain("could not be verified");
    expect(html).toMatch(detail);
    expect(html).not.toContain('name="tx"');
  });

  it("answers the same callback only once", async () => {
    const { callback } = await startSignIn();
    expect((await callback()).status).toBe(200);
    expect((await callback()).status).toBe(400);
  });
});
