import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthUpstream, startOAuthUpstream } from "../fixtures/oauth-upstream";
import type { CreatedKey } from "../mcp/helpers";
import { scanTable } from "../support/aws";
import { CookieBrowser } from "../support/cookie-browser";
import { mintTestToken } from "../support/oauth";
import { type Stack, startStack, waitFor } from "../support/stack";
import { authorizeThroughLink, signInToConsole } from "../support/upstream-link";

describe("upstream OAuth, per_user mode: each caller reaches the upstream as themselves", () => {
  let stack: Stack;
  let upstream: OAuthUpstream;
  let id = "";
  let ann: CreatedKey;
  let ben: CreatedKey;
  /** Every response body and page the test saw, to look for secrets in. */
  const seen: string[] = [];

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
  const whoami = async (key?: CreatedKey): Promise<{ status: number; body: any }> => {
    if (!key) {
      const response = await stack.call("POST", "/v1/tools/mine__whoami/call", { arguments: {} });
      seen.push(JSON.stringify(response.body));
      return response;
    }
    const response = await fetch(`${stack.api.url}/v1/tools/mine__whoami/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ arguments: {} }),
    });
    const text = await response.text();
    seen.push(text);
    return { status: response.status, body: JSON.parse(text) };
  };
  /**
   * Opens an authorization link as its person would in a browser: the gateway's sign-in as `person`
   * (a user name, or the admin's console session), the upstream's AS as `upstreamUser`, then the
   * callback page.
   */
  const authorizeAs = async (person: string, upstreamUser: string, url: string) => {
    const browser = new CookieBrowser();
    if (person === "admin") await signInToConsole(browser, stack.api.url);
    const html = await authorizeThroughLink(upstream, url, {
      browser,
      ...(person === "admin" ? {} : { as: { user: person } }),
      upstreamUser,
    });
    seen.push(html);
    return html;
  };
  /** A key owned by the user of the same name (who signs in to open its links). */
  const createKey = async (name: string): Promise<CreatedKey> => {
    const created = await stack.call("POST", "/v1/keys", { name, owner: `user:${name}` });
    expect(created.status).toBe(201);
    return created.body;
  };
  const statusOf = async () => (await stack.call("GET", `/v1/servers/${id}`)).body.status;

  beforeAll(async () => {
    stack = await startStack({ oauth: true });
    upstream = await startOAuthUpstream();
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("register → access_denied, authorization required, saying each user authorizes their own", async () => {
    const created = await stack.call("POST", "/v1/servers", {
      name: "mine",
      url: upstream.url,
      auth: { type: "oauth", mode: "per_user" },
    });
    expect(created.status).toBe(201);
    expect(created.body.auth).toEqual({ type: "oauth", mode: "per_user" });
    id = created.body.id;
    const status = await waitFor(statusOf, (s) => s.state === "failed");
    expect(status).toMatchObject({ reason: "access_denied", authorization: "required" });
    expect(status.error).toContain("each user authorizes their own connection");
  });

  it("an admin's own authorization lets the gateway catalogue the tools", async () => {
    const started = await stack.call("POST", `/v1/servers/${id}/authorize`);
    expect(started.status).toBe(200);
    expect(await authorizeAs("admin", "the-admin", started.body.authorizationUrl)).toContain(
      "for <strong>admin</strong>",
    );
    const status = await waitFor(statusOf, (s) => s.state === "connected");
    expect(status).toMatchObject({ authorization: "authorized", toolCount: 1 });
    const result = await whoami();
    expect(result.body.content[0].text).toContain("the-admin");
  });

  it("a key with no connection of its own gets a tool result telling it where to authorize", async () => {
    ann = await createKey("ann");
    ben = await createKey("ben");
    const first = await whoami(ann);
    expect(first.status).toBe(200);
    expect(first.body.isError).toBe(true);
    const link = first.body.structuredContent.authorizationUrl as string;
    expect(new URL(link).origin).toBe(new URL(stack.api.url).origin);
    expect(first.body.content[0].text).toContain(link);
    // Asking again, before opening it, gives the same link: no new registration at the upstream, no
    // new authorization under way.
    const registrations = upstream.counts.register;
    const pendingItems = async () =>
      JSON.stringify(await scanTable(stack.store.config)).split("UPSTREAMAUTH#").length;
    const pendingBefore = await pendingItems();
    const again = await whoami(ann);
    expect(again.body.structuredContent.authorizationUrl).toBe(link);
    expect(upstream.counts.register).toBe(registrations);
    expect(await pendingItems()).toBe(pendingBefore);
    expect(await authorizeAs("ann", "ann-upstream", link)).toContain(`key:${ann.id}`);
  });

  it("two callers, two upstream identities: each call carries its own caller's token", async () => {
    const link = (await whoami(ben)).body.structuredContent.authorizationUrl as string;
    await authorizeAs("ben", "ben-upstream", link);
    for (let round = 0; round < 2; round++) {
      const asAnn = await whoami(ann);
      expect(asAnn.body).toMatchObject({ isError: false });
      expect(asAnn.body.content[0].text).toContain("ann-upstream");
      const asBen = await whoami(ben);
      expect(asBen.body.content[0].text).toContain("ben-upstream");
      expect((await whoami()).body.content[0].text).toContain("the-admin");
    }
    // Three identities, three tokens at the upstream.
    expect(new Set(upstream.seen.slice(-6)).size).toBe(3);
  });

  it("a 2025 MCP client that takes URL elicitations is asked to open the link (-32042)", async () => {
    const carl = await createKey("carl");
    const client = new Client(
      { name: "per-user-e2e", version: "1.0.0" },
      { capabilities: { elicitation: { form: {}, url: {} } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${carl.key}` } },
      }),
    );
    try {
      const error = await client.callTool({ name: "mine__whoami", arguments: {} }).then(
        () => undefined,
        (caught: unknown) => caught as { code: number; data?: { elicitations?: Array<{ url: string }> } },
      );
      expect(error?.code).toBe(-32042);
      const url = error?.data?.elicitations?.[0]?.url as string;
      expect(new URL(url).origin).toBe(new URL(stack.api.url).origin);
      await authorizeAs("carl", "carl-upstream", url);
      const result = await client.callTool({ name: "mine__whoami", arguments: {} });
      expect(JSON.stringify(result.content)).toContain("carl-upstream");
    } finally {
      await client.close();
    }
  });

  it("a 2026 MCP client that takes URL elicitations is asked by input_required; its retry calls as itself", async () => {
    const gus = await createKey("gus");
    const client = new ClientV2(
      { name: "per-user-modern", version: "1.0.0" },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url?: string };
      asked.push(params.mode ?? "");
      // The person opens the link and signs in at the upstream; then the client says it is done.
      await authorizeAs("gus", "gus-upstream", params.url as string);
      return { action: "accept" };
    });
    await client.connect(
      new TransportV2(new URL(`${stack.api.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${gus.key}` } },
      }),
    );
    try {
      const result = await client.callTool({ name: "mine__whoami", arguments: {} });
      expect(asked).toEqual(["url"]);
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain("gus-upstream");
    } finally {
      await client.close();
    }
  });

  it("users signed in to the gateway (OAuth) each reach the upstream as themselves, by MCP", async () => {
    const oauth = stack.oauth;
    if (!oauth) throw new Error("the stack runs without OAuth");
    const clientOf = async (sub: string) => {
      const token = await mintTestToken(oauth.signer, { iss: oauth.issuer, aud: `${oauth.issuer}/mcp`, sub });
      const client = new Client({ name: `per-user-${sub}`, version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    const [dora, eve] = [await clientOf("dora"), await clientOf("eve")];
    try {
      for (const [client, upstreamUser] of [
        [dora, "dora-upstream"],
        [eve, "eve-upstream"],
      ] as const) {
        // A client without URL elicitations gets the link as the tool's (error) result.
        const first = await client.callTool({ name: "mine__whoami", arguments: {} });
        expect(first.isError).toBe(true);
        const link = (first.structuredContent as { authorizationUrl: string }).authorizationUrl;
        expect(JSON.stringify(first.content)).toContain(link);
        await authorizeAs(upstreamUser.replace("-upstream", ""), upstreamUser, link);
      }
      for (const [client, upstreamUser] of [
        [dora, "dora-upstream"],
        [eve, "eve-upstream"],
      ] as const) {
        const result = await client.callTool({ name: "mine__whoami", arguments: {} });
        expect(result.isError).toBeFalsy();
        expect(JSON.stringify(result.content)).toContain(upstreamUser);
      }
    } finally {
      await Promise.all([dora.close(), eve.close()]);
    }
    // Removing a user's access mapping removes their own upstream tokens too.
    expect((await stack.call("PUT", "/v1/access/user:dora", { servers: null })).status).toBe(200);
    expect(await stack.store.upstreamCredentials.get(id, "user:dora")).toBeDefined();
    expect((await stack.call("DELETE", "/v1/access/user:dora")).status).toBe(204);
    expect(await stack.store.upstreamCredentials.get(id, "user:dora")).toBeUndefined();
    expect(await stack.store.upstreamCredentials.get(id, "user:eve")).toBeDefined();
  });

  it("a 403 for one user (their account may not) is their answer: no new authorization, the server stays up", async () => {
    upstream.forbid("ben-upstream");
    try {
      const pendingBefore = JSON.stringify(await scanTable(stack.store.config)).split("UPSTREAMAUTH#").length;
      const refused = await whoami(ben);
      expect(refused.body.structuredContent?.authorizationRequired).toBeUndefined();
      expect(refused.status).toBe(502);
      expect(refused.body.code).toBe("upstream.error");
      const pendingAfter = JSON.stringify(await scanTable(stack.store.config)).split("UPSTREAMAUTH#").length;
      expect(pendingAfter).toBe(pendingBefore);
      expect((await statusOf()).state).toBe("connected");
      expect((await whoami(ann)).body.content[0].text).toContain("ann-upstream");
    } finally {
      upstream.forbid("ben-upstream", false);
    }
    expect((await whoami(ben)).body.content[0].text).toContain("ben-upstream");
  });

  it("the AS revokes one user's grants: that user is asked again, the others go on", async () => {
    upstream.revokeSubject("ann-upstream");
    const refused = await whoami(ann);
    expect(refused.body).toMatchObject({ isError: true, structuredContent: { authorizationRequired: true } });
    expect((await whoami(ben)).body.content[0].text).toContain("ben-upstream");
    expect((await statusOf()).state).toBe("connected");
    await authorizeAs("ann", "ann-upstream", refused.body.structuredContent.authorizationUrl);
    expect((await whoami(ann)).body.content[0].text).toContain("ann-upstream");
  });

  it("a refused token is refreshed by the call itself; tokens nearing expiry by the next sweep", async () => {
    const refreshes = upstream.counts.refresh;
    const refusedBefore = upstream.counts.refused;
    upstream.setAccessTokenSeconds(60); // new tokens expire inside the 2-minute refresh margin
    upstream.expireAccessTokens();
    // The upstream refuses ann's and ben's tokens: each call refreshes its caller's own and goes on.
    for (const [key, name] of [
      [ann, "ann-upstream"],
      [ben, "ben-upstream"],
    ] as const) {
      const answer = (await whoami(key)).body;
      expect(JSON.stringify(answer)).toContain(name);
      expect(answer.isError).toBe(false);
    }
    // One refresh each (a check running meanwhile may have done one of them; then the call takes its tokens).
    const afterCalls = upstream.counts.refresh;
    expect(afterCalls).toBeGreaterThanOrEqual(refreshes + 2);
    // Their new tokens expire within the margin: one sweep refreshes both (the check uses the newest).
    await stack.sweep();
    await waitFor(
      () => Promise.resolve(upstream.counts.refresh),
      (n) => n >= afterCalls + 2,
    );
    expect(upstream.counts.refused).toBe(refusedBefore);
    upstream.setAccessTokenSeconds(3600);
    expect((await whoami(ann)).body.content[0].text).toContain("ann-upstream");
    expect((await whoami(ben)).body.content[0].text).toContain("ben-upstream");
  });

  it("revoking a key deletes its sealed upstream tokens", async () => {
    expect(await stack.store.upstreamCredentials.get(id, `key:${ben.id}`)).toBeDefined();
    expect((await stack.call("DELETE", `/v1/keys/${ben.id}`)).status).toBe(204);
    expect(await stack.store.upstreamCredentials.get(id, `key:${ben.id}`)).toBeUndefined();
    expect(await stack.store.upstreamCredentials.get(id, `key:${ann.id}`)).toBeDefined();
  });

  it("no token, code or secret in the clear: logs, responses, table items", async () => {
    const items = JSON.stringify(await scanTable(stack.store.config));
    expect(items).toContain(`key:${ann.id}`);
    const everything = [...stack.logs, ...seen, items].join("\n");
    const secrets = Object.values(upstream.secrets).flat();
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });

  it("switching the server to shared mode drops every user's tokens", async () => {
    const patched = await stack.call("PATCH", `/v1/servers/${id}`, {
      auth: { type: "oauth", mode: "shared" },
    });
    expect(patched.status).toBe(200);
    expect(await stack.store.upstreamCredentials.held(id)).toEqual([]);
  });
});
