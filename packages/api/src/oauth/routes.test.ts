import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createAdminApp } from "../admin-app";
import type { AppDeps } from "../app-base";
import { createGatewayApp } from "../gateway-app";
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
