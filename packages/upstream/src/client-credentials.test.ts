import { describe, expect, it } from "vitest";
import { needsNewGrant, requestClientCredentialsToken } from "./client-credentials";

const RS = "https://mcp.example.com";
const AS = "https://as.example.com";

/** A fake resource and AS: the token endpoint answers the grant and records how the client authenticated. */
function fakeUpstream(authMethods: string[]) {
  const requests: Array<{ url: string; authorization: string | null; form: URLSearchParams }> = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const json = (body: unknown, status = 200) =>
      new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
    if (url.href === `${RS}/mcp`)
      return new Response(null, {
        status: 401,
        headers: { "www-authenticate": `Bearer resource_metadata="${RS}/prm"` },
      });
    if (url.href === `${RS}/prm`) return json({ resource: `${RS}/mcp`, authorization_servers: [AS] });
    if (url.href === `${AS}/.well-known/oauth-authorization-server`)
      return json({
        issuer: AS,
        authorization_endpoint: `${AS}/authorize`,
        token_endpoint: `${AS}/token`,
        response_types_supported: ["code"],
        token_endpoint_auth_methods_supported: authMethods,
      });
    if (url.pathname.endsWith("/token")) {
      const headers = new Headers(init?.headers);
      requests.push({
        url: url.href,
        authorization: headers.get("authorization"),
        form: new URLSearchParams(String(init?.body)),
      });
      return json({ access_token: "at-1", token_type: "Bearer", expires_in: 600 });
    }
    return new Response("not found", { status: 404 });
  }) as typeof fetch;
  return { requests, fetchFn };
}

const auth = {
  type: "client_credentials" as const,
  clientId: "gw",
  clientSecret: "s3cret",
  scopes: ["read"],
};

describe("the client_credentials grant", () => {
  it("finds the token endpoint from the 401, names the PRM's resource, authenticates with basic", async () => {
    // Prepare
    const { requests, fetchFn } = fakeUpstream(["client_secret_basic", "client_secret_post"]);

    // Act
    const held = await requestClientCredentialsToken({ url: `${RS}/mcp`, auth, fetch: fetchFn });

    // Assess
    expect(held.accessToken).toBe("at-1");
    expect(held.refreshToken).toBeUndefined();
    expect(held.client).toEqual({ client_id: "gw" }); // the secret stays in the server's config
    expect(Date.parse(held.expiresAt ?? "")).toBeGreaterThan(Date.now());
    const [request] = requests;
    expect(request?.url).toBe(`${AS}/token`);
    expect(request?.form.get("grant_type")).toBe("client_credentials");
    expect(request?.form.get("resource")).toBe(`${RS}/mcp`);
    expect(request?.form.get("scope")).toBe("read");
    expect(request?.form.get("client_secret")).toBeNull();
    expect(request?.authorization).toBe(`Basic ${Buffer.from("gw:s3cret").toString("base64")}`);
  });

  it("sends the secret in the form when the AS only takes client_secret_post", async () => {
    // Prepare
    const { requests, fetchFn } = fakeUpstream(["client_secret_post"]);

    // Act
    await requestClientCredentialsToken({ url: `${RS}/mcp`, auth, fetch: fetchFn });

    // Assess
    expect(requests[0]?.form.get("client_secret")).toBe("s3cret");
    expect(requests[0]?.authorization).toBeNull();
  });

  it("uses a configured tokenUrl without discovery", async () => {
    // Prepare
    const { requests, fetchFn } = fakeUpstream([]);

    // Act
    await requestClientCredentialsToken({
      url: `${RS}/mcp`,
      auth: { ...auth, tokenUrl: `${AS}/custom/token` },
      fetch: fetchFn,
    });

    // Assess
    expect(requests.map((r) => r.url)).toEqual([`${AS}/custom/token`]);
  });

  it("asks again when there is no token or it expires within the margin", () => {
    const at = (ms: number) => ({
      authorizationServer: AS,
      client: { client_id: "gw" },
      accessToken: "t",
      expiresAt: new Date(Date.now() + ms).toISOString(),
    });
    expect(needsNewGrant(undefined)).toBe(true);
    expect(needsNewGrant(at(60_000))).toBe(true);
    expect(needsNewGrant(at(600_000))).toBe(false);
  });
});
