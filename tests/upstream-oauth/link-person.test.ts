import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createAwsClients, hashState, upstreamKeys } from "@mcpgw/aws";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthUpstream, startOAuthUpstream } from "../fixtures/oauth-upstream";
import { type OidcProvider, startOidcProvider } from "../fixtures/oidc-provider";
import type { CreatedKey } from "../mcp/helpers";
import { CookieBrowser } from "../support/cookie-browser";
import { mintTestToken } from "../support/oauth";
import { type Stack, startStack, waitFor } from "../support/stack";
import {
  authorizeAsAdmin,
  authorizeThroughLink,
  finishAtUpstream,
  openLink,
  signInToConsole,
} from "../support/upstream-link";

/**
 * The person who completes a per_user upstream authorization is the caller it was issued for: the
 * link asks for the gateway's own sign-in (here its development sign-in page) and goes on only for
 * the user, the key's owner (a member of an owner group) or the admin; anyone else is refused and
 * nothing is bound; the link works once and expires.
 */
describe("a per_user authorization link opens only for the person it was issued for", () => {
  let stack: Stack;
  let upstream: OAuthUpstream;
  let serverId = "";

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
  const whoami = async (key: CreatedKey): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${stack.api.url}/v1/tools/mine__whoami/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ arguments: {} }),
    });
    return { status: response.status, body: await response.json() };
  };
  const createKey = async (name: string, owner?: string): Promise<CreatedKey> => {
    const created = await stack.call("POST", "/v1/keys", { name, ...(owner ? { owner } : {}) });
    expect(created.status).toBe(201);
    return created.body;
  };
  /** The link a key's first call is given. */
  const linkOf = async (key: CreatedKey): Promise<string> => {
    const first = await whoami(key);
    expect(first.body).toMatchObject({ isError: true, structuredContent: { authorizationRequired: true } });
    return first.body.structuredContent.authorizationUrl;
  };
  const credentialOf = (subject: string) => stack.store.upstreamCredentials.get(serverId, subject);

  beforeAll(async () => {
    stack = await startStack({ oauth: true });
    upstream = await startOAuthUpstream();
    const created = await stack.call("POST", "/v1/servers", {
      name: "mine",
      url: upstream.url,
      auth: { type: "oauth", mode: "per_user" },
    });
    expect(created.status).toBe(201);
    serverId = created.body.id;
    // The admin's own connection (their console session opens its link) catalogues the tools.
    await authorizeAsAdmin(stack, upstream, serverId);
    await waitFor(
      async () => (await stack.call("GET", `/v1/servers/${serverId}`)).body.status,
      (status) => status.state === "connected",
    );
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("keys carry their owner: set on create, validated, shown in the listing", async () => {
    const owned = await createKey("alice-laptop", "user:alice");
    expect(owned.owner).toBe("user:alice");
    expect((await createKey("devs-ci", "group:devs")).owner).toBe("group:devs");
    expect((await createKey("nobody's")).owner).toBeNull();
    for (const owner of ["alice", "admin", "key:123", "user:", "user:a:b", "team:devs", 7]) {
      const refused = await stack.call("POST", "/v1/keys", { name: "bad", owner });
      expect(refused.status, JSON.stringify(owner)).toBe(400);
      expect(refused.body.code).toBe("request.invalid");
    }
    const listed = (await stack.call("GET", "/v1/keys")).body.keys;
    expect(listed.find((key: CreatedKey) => key.id === owned.id)).toMatchObject({ owner: "user:alice" });
  });

  it("a key with no owner cannot start a per_user authorization: 409 auth.owner_required (REST and MCP)", async () => {
    const ownerless = await createKey("ownerless");
    const rest = await fetch(`${stack.api.url}/v1/tools/mine__whoami/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${ownerless.key}`, "content-type": "application/json" },
      body: JSON.stringify({ arguments: {} }),
    });
    expect(rest.status).toBe(409);
    expect(rest.headers.get("content-type")).toContain("application/problem+json");
    const problem = (await rest.json()) as { code: string; detail: string };
    expect(problem.code).toBe("auth.owner_required");
    expect(problem.detail).toContain("Create a key with an owner");
    expect(problem.detail).toContain('"owner"');

    const client = new Client({ name: "ownerless", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${ownerless.key}` } },
      }),
    );
    try {
      const error = await client.callTool({ name: "mine__whoami", arguments: {} }).then(
        (result) => ({ result }),
        (caught: unknown) => caught as { code?: number; message?: string; data?: { code?: string } },
      );
      expect(error).toMatchObject({ code: -32600, data: { code: "auth.owner_required" } });
      expect((error as { message: string }).message).toContain("Create a key with an owner");
    } finally {
      await client.close();
    }
    expect(await credentialOf(`key:${ownerless.id}`)).toBeUndefined();
  });

  it("someone else who opens the link is refused and nothing is bound; its person then completes it", async () => {
    const key = await createKey("alice-key", "user:alice");
    const link = await linkOf(key);
    expect(new URL(link).origin).toBe(new URL(stack.api.url).origin);
    const authorizeCount = upstream.counts.authorize;

    // Bob opens it and signs in as himself: a page saying it is not his, no way on to the upstream.
    const bob = await openLink(new CookieBrowser(), link, { user: "bob" });
    expect(bob.status).toBe(403);
    expect(bob.location).toBeUndefined();
    expect(bob.html).toContain("This link is not yours");
    expect(bob.html).toContain("bob");
    expect(bob.html).not.toContain(upstream.origin);
    expect(upstream.counts.authorize).toBe(authorizeCount);
    // Someone in alice's groups but not alice is no better.
    expect((await openLink(new CookieBrowser(), link, { user: "alice2", groups: ["alice"] })).status).toBe(
      403,
    );
    // Nothing bound: alice's key still has no connection, and is handed the same link still unused.
    expect(await credentialOf(`key:${key.id}`)).toBeUndefined();
    expect(await linkOf(key)).toBe(link);

    // Alice opens it: on to the upstream, where she signs in as her account there.
    const page = await authorizeThroughLink(upstream, link, {
      as: { user: "alice" },
      upstreamUser: "alice-upstream",
    });
    expect(page).toContain(`key:${key.id}`);
    expect(await credentialOf(`key:${key.id}`)).toBeDefined();
    expect((await whoami(key)).body.content[0].text).toContain("alice-upstream");
  });

  it("the link works once: opened by its person it is used up, and only that browser finishes it", async () => {
    const key = await createKey("alice-second", "user:alice");
    const link = await linkOf(key);
    const alice = new CookieBrowser();
    const opened = await openLink(alice, link, { user: "alice" });
    expect(opened.status).toBe(302);
    const upstreamUrl = opened.location as string;
    expect(new URL(upstreamUrl).origin).toBe(upstream.origin);

    // Opened again — by alice in another browser, or anyone — it is used.
    const again = await openLink(new CookieBrowser(), link, { user: "alice" });
    expect(again.status).toBe(400);
    expect(again.html).toContain("already opened");
    expect((await openLink(new CookieBrowser(), link, { user: "mallory" })).status).toBe(400);

    // Had the upstream URL leaked, another browser signing in there cannot finish it at the callback.
    upstream.signInAs("mallory-upstream");
    const approved = await fetch(upstreamUrl, { redirect: "manual" });
    const callback = await fetch(approved.headers.get("location") as string, { redirect: "manual" });
    expect(callback.status).toBe(400);
    expect(await credentialOf(`key:${key.id}`)).toBeUndefined();

    // Alice's browser still can; after that the link is gone.
    await finishAtUpstream(upstream, alice, upstreamUrl, "alice-upstream");
    expect((await whoami(key)).body.content[0].text).toContain("alice-upstream");
    const afterwards = await openLink(new CookieBrowser(), link, { user: "alice" });
    expect(afterwards.status).toBe(400);
    expect(afterwards.html).toContain("unknown or expired");
  });

  it("an expired link is refused, even to its person", async () => {
    const key = await createKey("alice-late", "user:alice");
    const link = await linkOf(key);
    // Ten minutes pass: the stored authorization's time is up.
    const state = new URL(link).searchParams.get("link") as string;
    const { ddb } = createAwsClients(stack.store.config);
    await ddb.send(
      new UpdateCommand({
        TableName: stack.store.config.tableName,
        Key: upstreamKeys.pending(hashState(state)),
        UpdateExpression: "SET expiresAt = :past",
        ExpressionAttributeValues: { ":past": Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const late = await openLink(new CookieBrowser(), link, { user: "alice" });
    expect(late.status).toBe(400);
    expect(late.html).toContain("unknown or expired");
    expect(late.location).toBeUndefined();
    // The caller is given a new link, which works.
    const fresh = await linkOf(key);
    expect(fresh).not.toBe(link);
    await authorizeThroughLink(upstream, fresh, { as: { user: "alice" }, upstreamUser: "alice-upstream" });
    expect((await whoami(key)).body.content[0].text).toContain("alice-upstream");
  });

  it("a group-owned key's link opens for a member of the group, not for others", async () => {
    const key = await createKey("devs-shared", "group:devs");
    const link = await linkOf(key);
    expect((await openLink(new CookieBrowser(), link, { user: "dan", groups: ["ops"] })).status).toBe(403);
    expect((await openLink(new CookieBrowser(), link, { user: "devs" })).status).toBe(403);
    expect(await credentialOf(`key:${key.id}`)).toBeUndefined();
    await authorizeThroughLink(upstream, link, {
      as: { user: "carol", groups: ["ops", "devs"] },
      upstreamUser: "carol-upstream",
    });
    expect((await whoami(key)).body.content[0].text).toContain("carol-upstream");
  });

  it("a signed-in user's link opens for that user only; the admin's for the admin's console only", async () => {
    const oauth = stack.oauth;
    if (!oauth) throw new Error("the stack runs without OAuth");
    const token = await mintTestToken(oauth.signer, {
      iss: oauth.issuer,
      aud: `${oauth.issuer}/mcp`,
      sub: "dora",
    });
    const client = new Client({ name: "dora", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const first = await client.callTool({ name: "mine__whoami", arguments: {} });
      const link = (first.structuredContent as { authorizationUrl: string }).authorizationUrl;
      expect((await openLink(new CookieBrowser(), link, { user: "eve" })).status).toBe(403);
      const admin = new CookieBrowser();
      await signInToConsole(admin, stack.api.url);
      // The admin's console session is no sign-in as dora: the sign-in form is shown, not the upstream.
      expect((await openLink(admin, link)).status).toBe(200);
      expect(await credentialOf("user:dora")).toBeUndefined();
      await authorizeThroughLink(upstream, link, { as: { user: "dora" }, upstreamUser: "dora-upstream" });
      const result = await client.callTool({ name: "mine__whoami", arguments: {} });
      expect(JSON.stringify(result.content)).toContain("dora-upstream");
    } finally {
      await client.close();
    }

    // The admin's own link: without a console session it asks for one (a development sign-in is no admin).
    await stack.store.upstreamCredentials.remove(serverId, "admin");
    const started = await stack.call("POST", `/v1/servers/${serverId}/authorize`);
    const adminLink = started.body.authorizationUrl as string;
    const stranger = await openLink(new CookieBrowser(), adminLink, { user: "admin" });
    expect(stranger.status).toBe(401);
    expect(stranger.html).toContain("sign in to the console");
    expect(stranger.location).toBeUndefined();
    const admin = new CookieBrowser();
    await signInToConsole(admin, stack.api.url);
    await authorizeThroughLink(upstream, adminLink, { browser: admin, upstreamUser: "the-admin" });
    expect(await credentialOf("admin")).toBeDefined();
  });
});

describe("with an OpenID provider, the link's sign-in is the provider's", () => {
  let op: OidcProvider;
  let stack: Stack;
  let upstream: OAuthUpstream;

  beforeAll(async () => {
    op = await startOidcProvider({
      accounts: [
        { sub: "auth0|ada", groups: ["eng"] },
        { sub: "bob", groups: ["sales"] },
      ],
    });
    upstream = await startOAuthUpstream();
    stack = await startStack({ oidc: op.settings });
    op.register([`${stack.api.url}/oauth/upstream/signin`]);
    const created = await stack.call("POST", "/v1/servers", {
      name: "mine",
      url: upstream.url,
      auth: { type: "oauth", mode: "per_user" },
    });
    await authorizeAsAdmin(stack, upstream, created.body.id);
    await waitFor(
      async () => (await stack.call("GET", `/v1/servers/${created.body.id}`)).body.status,
      (status) => status.state === "connected",
    );
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
    await op?.close();
  });

  it("a member of the owner group goes on to the upstream; someone else signed in there is refused", async () => {
    const created = await stack.call("POST", "/v1/keys", { name: "eng-ci", owner: "group:eng" });
    const key = created.body as CreatedKey;
    const call = () =>
      fetch(`${stack.api.url}/v1/tools/mine__whoami/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify({ arguments: {} }),
      }).then(
        (response) =>
          response.json() as Promise<{
            content: Array<{ text: string }>;
            structuredContent?: { authorizationUrl: string };
          }>,
      );
    const link = (await call()).structuredContent?.authorizationUrl as string;
    const atUpstream = (url: URL) => url.origin === upstream.origin;

    const codes = upstream.counts.code;
    op.signInAs("bob");
    const bob = await new CookieBrowser().follow(link, atUpstream);
    expect(bob.stoppedAt).toBeUndefined();
    expect(bob.last.url.pathname).toBe("/oauth/upstream/signin");
    expect(bob.last.response.status).toBe(403);
    expect(await bob.last.response.text()).toContain("This link is not yours");
    expect(upstream.counts.code).toBe(codes);

    op.signInAs("auth0|ada");
    const ada = new CookieBrowser();
    const { stoppedAt } = await ada.follow(link, atUpstream);
    expect(stoppedAt?.origin).toBe(upstream.origin);
    await finishAtUpstream(upstream, ada, (stoppedAt as URL).toString(), "ada-upstream");
    expect((await call()).content[0]?.text).toContain("ada-upstream");
  });
});
