/**
 * An MCP client signs in to the gateway the standard way and uses it: the official SDK v2 client,
 * told only the endpoint's URL, gets a 401, discovers the protected resource and the authorization
 * server, registers, signs in on the development page, and then lists and calls tools — on
 * `/mcp/{server}` and on `/mcp`, where it sees only the servers its user is mapped to.
 */
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Upstream } from "../fixtures/mcp-upstream";
import { scanTable } from "../support/aws";
import {
  signedInClient,
  signIn,
  startOAuthStack,
  TEST_REDIRECT,
  TestProvider,
} from "../support/oauth-client";
import type { Stack } from "../support/stack";

describe("an MCP client signs in with OAuth", () => {
  let stack: Stack;
  let upstreams: Upstream[] = [];

  beforeAll(async () => {
    ({ stack, upstreams } = await startOAuthStack(["docs", "billing"]));
    expect((await stack.call("PUT", "/v1/access/user:ada", { servers: ["docs"] })).status).toBe(200);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  });

  it("on /mcp/{server}: discovers, registers, signs in, then lists and calls the server's tools", async () => {
    const { client, provider } = await signedInClient(
      stack.api.url,
      new URL(`${stack.api.url}/mcp/docs`),
      "ada",
    );
    expect(provider.info?.client_id).toMatch(/^mgwcl_/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("echo");
    const result = await client.callTool({ name: "echo", arguments: { text: "signed in" } });
    expect(JSON.stringify(result.content)).toContain("signed in");
    await client.close();
  });

  it("on /mcp: the aggregate shows only the servers the user is mapped to", async () => {
    const { client } = await signedInClient(stack.api.url, new URL(`${stack.api.url}/mcp`), "ada");
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("docs__echo");
    expect(names.some((name) => name.startsWith("billing__"))).toBe(false);
    await client.close();
  });

  it("a token for /mcp/docs is refused on /mcp/billing with a challenge naming billing's metadata", async () => {
    const { client, provider } = await signedInClient(
      stack.api.url,
      new URL(`${stack.api.url}/mcp/docs`),
      "ada",
    );
    await client.close();
    const response = await fetch(`${stack.api.url}/mcp/billing`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.tok?.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(
      `resource_metadata="${stack.api.url}/.well-known/oauth-protected-resource/mcp/billing"`,
    );
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("keeps no token, code or verifier in the clear: not in the logs, not in any stored item", async () => {
    const provider = new TestProvider(TEST_REDIRECT);
    const url = new URL(`${stack.api.url}/mcp/docs`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: "oauth-test", version: "1" }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const { location } = await signIn(stack.api.url, provider.authorizationUrl as URL, "ada");
    const code = location.searchParams.get("code") ?? "";
    await first.finishAuth(location.searchParams);
    const client = new Client({ name: "oauth-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    await client.callTool({ name: "echo", arguments: { text: "once more" } });
    await client.close();

    const secrets = {
      code,
      verifier: await provider.codeVerifier(),
      accessToken: provider.tok?.access_token ?? "",
      refreshToken: provider.tok?.refresh_token ?? "",
    };
    const items = JSON.stringify(await scanTable(stack.store.config));
    const logs = stack.logs.join("\n");
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length, name).toBeGreaterThan(20);
      expect(items.includes(value), `${name} in a stored item`).toBe(false);
      expect(logs.includes(value), `${name} in the logs`).toBe(false);
    }
    // The access token's signature alone (the part only a holder has) is not stored or logged either. Only
    // the JWT is split: a PKCE verifier may hold dots too, and a few characters after one prove nothing.
    const signature = secrets.accessToken.split(".").at(-1) ?? "";
    expect(signature.length).toBeGreaterThan(20);
    expect(items.includes(signature) || logs.includes(signature), "the access token's signature").toBe(false);
  });
});
