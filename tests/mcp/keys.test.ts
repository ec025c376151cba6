/**
 * Client API keys: stored only as SHA-256 hashes (raw DynamoDB items are read), never shown again
 * after creation, revoked within the 2 s verification cache, 401 when wrong or missing, 403 on every
 * admin route group but `/v1/threads` (keys own their threads: tests/runner/thread-owners.test.ts);
 * the admin token keeps working on the data plane; keys work on `/v1/tools`, `/v1/chats` and `/mcp`,
 * scoped to their servers.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, it } from "vitest";
import { KEY_CACHE_MS } from "../../packages/api/src/auth";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Json, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { scanTable } from "../support/aws";
import { waitFor } from "../support/stack";
import { type CreatedKey, createKey, INITIALIZE, rawRequest } from "./helpers";

/** The contract: a revoked key stops working within 2 s everywhere. */
const REVOCATION_BOUND_MS = 2_000;

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

describe("client API keys", () => {
  let stack: Stack;
  let alphaUpstream: Upstream;
  let betaUpstream: Upstream;
  const alpha = uniqueName("alpha");
  const beta = uniqueName("beta");
  let alphaId: string;
  let everyKey: CreatedKey;
  let alphaKey: CreatedKey;

  /** A request with `Authorization: Bearer <token>` (or the given header; "" sends none). */
  function as(token: string | { authorization: string }) {
    const authorization = typeof token === "string" ? `Bearer ${token}` : token.authorization;
    return (method: string, path: string, body?: unknown) =>
      stack.request(method, path, { headers: { authorization }, ...(body === undefined ? {} : { body }) });
  }

  /** An MCP JSON-RPC request over plain HTTP. */
  function mcpPost(path: string, authorization: string | undefined, body: unknown = INITIALIZE) {
    return rawRequest(`${stack.api.url}${path}`, {
      headers: authorization === undefined ? {} : { authorization },
      body,
    });
  }

  beforeAll(async () => {
    [stack, alphaUpstream, betaUpstream] = await Promise.all([
      startGatewayStack(),
      startUpstream({ name: "alpha-upstream" }),
      startUpstream({ name: "beta-upstream" }),
    ]);
    [alphaId] = await Promise.all([
      createConnected(stack, { name: alpha, url: alphaUpstream.url }),
      createConnected(stack, { name: beta, url: betaUpstream.url }),
    ]);
    [everyKey, alphaKey] = await Promise.all([
      createKey(stack, "every server"),
      createKey(stack, "alpha only", [alpha]),
    ]);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.allSettled([alphaUpstream?.close(), betaUpstream?.close()]);
  });

  it("creation shows the key once: mgw_ prefix, 256 bits of randomness, servers bound to ids (null = all)", ({
    expect,
  }) => {
    expect(everyKey).toEqual({
      id: expect.any(String),
      name: "every server",
      servers: null,
      serverIds: null,
      rateLimit: null,
      owner: null,
      toolsets: [],
      toolPolicy: null,
      key: expect.stringMatching(/^mgw_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
    });
    expect(alphaKey).toMatchObject({ name: "alpha only", servers: [alpha], serverIds: [alphaId] });
    expect(alphaKey.key).not.toBe(everyKey.key);
  });

  it("at rest only the SHA-256 of a key exists: no raw item holds the key material", async ({ expect }) => {
    const items = await scanTable(stack.store.config);
    const raw = JSON.stringify(items);
    for (const created of [everyKey, alphaKey]) {
      const secretPart = created.key.slice("mgw_".length);
      expect(raw).not.toContain(created.key);
      expect(raw).not.toContain(secretPart);
      expect(raw).toContain(sha256(created.key));
      const item = items.find((candidate) => candidate.id === created.id) as Json;
      expect(item).toMatchObject({ pk: `KEYHASH#${sha256(created.key)}`, name: created.name });
      expect(Object.values(item).some((value) => String(value).includes(secretPart))).toBe(false);
    }
  });

  it("GET /v1/keys lists the keys without key material or hashes", async ({ expect }) => {
    const listed = await stack.request("GET", "/v1/keys");
    expect(listed.status).toBe(200);
    const mine = listed.body.keys.filter((key: { id: string }) =>
      [everyKey.id, alphaKey.id].includes(key.id),
    );
    expect(mine).toEqual(
      expect.arrayContaining([
        {
          id: everyKey.id,
          name: "every server",
          servers: null,
          serverIds: null,
          rateLimit: null,
          owner: null,
          toolsets: [],
          toolPolicy: null,
          createdAt: everyKey.createdAt,
        },
        {
          id: alphaKey.id,
          name: "alpha only",
          servers: [alpha],
          serverIds: [alphaId],
          rateLimit: null,
          owner: null,
          toolsets: [],
          toolPolicy: null,
          createdAt: alphaKey.createdAt,
        },
      ]),
    );
    for (const created of [everyKey, alphaKey]) {
      expect(listed.text).not.toContain(created.key.slice("mgw_".length));
      expect(listed.text).not.toContain(sha256(created.key));
    }
  });

  it("a missing or wrong key → 401 on /v1/tools, tool calls and both MCP endpoints", async ({ expect }) => {
    const wrong = [
      undefined,
      "Bearer ",
      "Bearer not-a-key",
      `Bearer mgw_${"A".repeat(43)}`,
      `Bearer ${everyKey.key}x`,
      `Basic ${Buffer.from(`user:${everyKey.key}`).toString("base64")}`,
      everyKey.key, // no scheme
    ];
    const callsBefore = alphaUpstream.toolCalls;
    for (const authorization of wrong) {
      const header = { authorization: authorization ?? "" };
      const list = await as(header)("GET", "/v1/tools");
      expect(list.status, String(authorization)).toBe(401);
      expect(list.body).toMatchObject({ code: "auth.unauthorized" });
      expect(list.headers.get("www-authenticate")).toMatch(/^Bearer /);
      const call = await as(header)("POST", `/v1/tools/${alpha}__echo/call`, { arguments: { text: "x" } });
      expect(call.status, String(authorization)).toBe(401);
      for (const path of ["/mcp", `/mcp/${alpha}`]) {
        const mcp = await mcpPost(path, authorization);
        expect(mcp.status, `${path} ${authorization}`).toBe(401);
        expect(mcp.body).toMatchObject({ code: "auth.unauthorized" });
      }
    }
    // The upstream never saw any of it.
    expect(alphaUpstream.toolCalls).toBe(callsBefore);
  });

  it("a key on any admin route → 403 (even an unscoped key; unrouted paths are 404); the admin token works there", async ({
    expect,
  }) => {
    const adminRoutes: Array<[string, string, unknown?]> = [
      ["GET", "/v1/servers"],
      ["POST", "/v1/servers", { name: uniqueName("sneaky"), url: alphaUpstream.url }],
      ["GET", `/v1/servers/${alphaId}`],
      ["PATCH", `/v1/servers/${alphaId}`, { enabled: false }],
      ["DELETE", `/v1/servers/${alphaId}`],
      ["POST", `/v1/servers/${alphaId}/reconnect`],
      ["GET", `/v1/servers/${alphaId}/tools`],
      ["POST", "/v1/servers/import", { mcpServers: {} }],
      ["GET", "/v1/secrets"],
      ["PUT", "/v1/secrets/sneaky", { value: "x" }],
      ["DELETE", "/v1/secrets/sneaky"],
      ["GET", "/v1/keys"],
      ["POST", "/v1/keys", { name: "escalate" }],
      ["DELETE", `/v1/keys/${everyKey.id}`],
    ];
    for (const key of [everyKey, alphaKey]) {
      for (const [method, path, body] of adminRoutes) {
        const response = await as(key.key)(method, path, body);
        expect(response.status, `${key.name}: ${method} ${path}`).toBe(403);
        expect(response.body).toMatchObject({ code: "auth.forbidden" });
      }
      // No route there: nothing to refuse or reveal.
      for (const path of ["/v1/servers/", "/v1/keys/nope/deeper"])
        expect((await as(key.key)("GET", path)).status, `${key.name}: GET ${path}`).toBe(404);
    }
    // Nothing changed: the server is still there and enabled, no key was made or revoked.
    const server = await stack.call("GET", `/v1/servers/${alphaId}`);
    expect(server.status).toBe(200);
    expect(server.body).toMatchObject({ name: alpha, enabled: true });
    const keys = await stack.call("GET", "/v1/keys");
    expect(keys.body.keys.map((key: { name: string }) => key.name)).not.toContain("escalate");
    expect(keys.body.keys.map((key: { id: string }) => key.id)).toContain(everyKey.id);
    for (const path of ["/v1/servers", "/v1/secrets", "/v1/keys", "/v1/threads/t1/tools"]) {
      expect((await stack.call("GET", path)).status, path).toBe(200);
    }
  });

  it("path tricks do not reach admin handlers with a key", async ({ expect }) => {
    for (const path of [
      "/v1//servers",
      "//v1/servers",
      "/v1/Servers",
      "/V1/servers",
      "/v1/%73ervers",
      "/v1/./servers",
    ]) {
      const response = await as(everyKey.key)("GET", path);
      expect([401, 403, 404], `${path} → ${response.status}`).toContain(response.status);
      expect(response.text).not.toContain(alphaId);
    }
  });

  it("the admin token works on the data plane: /v1/tools, calls, /mcp and /mcp/{server}", async ({
    expect,
  }) => {
    const tools = await stack.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining([`${alpha}__echo`, `${beta}__echo`]),
    );
    const called = await stack.callTool(`${beta}__add`, { a: 1, b: 2 });
    expect(called).toMatchObject({ status: 200, body: { text: "3", isError: false } });
    const admin = `Bearer ${(await import("../support/app")).TEST_ADMIN_TOKEN}`;
    const listed = await mcpPost("/mcp", admin, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    expect(listed.status).toBe(200);
    expect(listed.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(
      expect.arrayContaining([`${alpha}__echo`, `${beta}__echo`]),
    );
    const front = await mcpPost(`/mcp/${beta}`, admin, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "admin" } },
    });
    expect(front.body.result).toMatchObject({ content: [{ type: "text", text: "admin" }], isError: false });
  });

  it("keys work on /v1/tools and /v1/chats, scoped to their servers", async ({ expect }) => {
    const every = as(everyKey.key);
    const scoped = as(alphaKey.key);

    const all = await every("GET", "/v1/tools");
    expect(all.status).toBe(200);
    expect(all.body.tools.map((tool: { server: string }) => tool.server)).toEqual(
      expect.arrayContaining([alpha, beta]),
    );
    const mine = await scoped("GET", "/v1/tools");
    expect(mine.status).toBe(200);
    expect(mine.body.tools.map((tool: { name: string }) => tool.name)).toEqual([
      `${alpha}__add`,
      `${alpha}__echo`,
      `${alpha}__fail`,
      `${alpha}__slow`,
    ]);

    expect(
      await scoped("POST", `/v1/tools/${alpha}__echo/call`, { arguments: { text: "ok" } }),
    ).toMatchObject({
      status: 200,
      body: { text: "ok", isError: false },
    });
    const betaCalls = betaUpstream.toolCalls;
    const refused = await scoped("POST", `/v1/tools/${beta}__echo/call`, { arguments: { text: "no" } });
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ code: "server.not_found" });
    expect(betaUpstream.toolCalls).toBe(betaCalls);
    expect(await every("POST", `/v1/tools/${beta}__echo/call`, { arguments: { text: "yes" } })).toMatchObject(
      {
        status: 200,
        body: { text: "yes" },
      },
    );

    // An empty scope is no servers at all, not every server.
    const none = await createKey(stack, "no servers", []);
    expect(none).toMatchObject({ servers: [], serverIds: [] });
    expect((await as(none.key)("GET", "/v1/tools")).body.tools).toEqual([]);
    expect(
      (await as(none.key)("POST", `/v1/tools/${alpha}__echo/call`, { arguments: { text: "x" } })).status,
    ).toBe(404);
    const noneMcp = await mcpPost("/mcp", `Bearer ${none.key}`, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/list",
      params: {},
    });
    expect(noneMcp.body.result.tools).toEqual([]);
    expect((await mcpPost(`/mcp/${alpha}`, `Bearer ${none.key}`)).status).toBe(404);

    const chat = uniqueName("chat");
    const toggles = await scoped("GET", `/v1/chats/${chat}/servers`);
    expect(toggles.status).toBe(200);
    expect(toggles.body.servers.map((server: { name: string }) => server.name)).toEqual([alpha]);
    const everyToggles = await every("GET", `/v1/chats/${chat}/servers`);
    expect(everyToggles.body.servers.map((server: { name: string }) => server.name)).toEqual(
      expect.arrayContaining([alpha, beta]),
    );
    const off = await scoped("PUT", `/v1/chats/${chat}/servers/${alpha}`, { enabled: false });
    expect(off).toMatchObject({ status: 200, body: { name: alpha, enabled: false } });
    const hidden = await scoped("GET", `/v1/tools?chat=${chat}`);
    expect(hidden.body.tools).toEqual([]);
    const outside = await scoped("PUT", `/v1/chats/${chat}/servers/${beta}`, { enabled: false });
    expect(outside.status).toBe(404);
    expect(outside.body).toMatchObject({ code: "server.not_found" });
    // The scoped key's refusal left the other server visible in that chat for everyone else.
    const stillThere = await every("GET", `/v1/tools?chat=${chat}`);
    expect(stillThere.body.tools.map((tool: { server: string }) => tool.server)).toContain(beta);
  });

  it(`revocation takes effect everywhere within ${REVOCATION_BOUND_MS} ms (the verification cache)`, {
    timeout: 20_000,
  }, async ({ expect }) => {
    expect(KEY_CACHE_MS).toBeLessThanOrEqual(REVOCATION_BOUND_MS);
    const doomed = await createKey(stack, "to revoke");
    const use = as(doomed.key);
    // Warm every cache: a positive verification is remembered for KEY_CACHE_MS.
    expect((await use("GET", "/v1/tools")).status).toBe(200);
    expect((await mcpPost("/mcp", `Bearer ${doomed.key}`)).status).toBe(200);

    const revoked = await stack.call("DELETE", `/v1/keys/${doomed.id}`);
    expect(revoked.status).toBe(204);
    const revokedAt = Date.now();
    await waitFor(
      async () => [
        (await use("GET", "/v1/tools")).status,
        (await mcpPost("/mcp", `Bearer ${doomed.key}`)).status,
      ],
      (statuses) => statuses.every((status) => status === 401),
      { timeoutMs: REVOCATION_BOUND_MS + 3_000, intervalMs: 100 },
    );
    const tookMs = Date.now() - revokedAt;
    // The bound plus a margin for one polling round on a loaded machine.
    expect(tookMs).toBeLessThanOrEqual(REVOCATION_BOUND_MS + 1_000);
    // And it stays revoked.
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_MS + 200));
    expect((await use("GET", "/v1/tools")).status).toBe(401);
    expect((await mcpPost(`/mcp/${alpha}`, `Bearer ${doomed.key}`)).status).toBe(401);

    expect((await stack.call("DELETE", `/v1/keys/${doomed.id}`)).status).toBe(404);
    const listed = await stack.call("GET", "/v1/keys");
    expect(listed.body.keys.map((key: { id: string }) => key.id)).not.toContain(doomed.id);
    expect(JSON.stringify(await scanTable(stack.store.config))).not.toContain(sha256(doomed.key));
    // Other keys are untouched.
    expect((await as(everyKey.key)("GET", "/v1/tools")).status).toBe(200);
  });
});
