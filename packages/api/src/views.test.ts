/**
 * The console reads the API through the types of these schemas (packages/console/src/types.ts), so
 * the answers must be exactly them: a field the API sends that its schema does not name is invisible to
 * the console's types, and one the schema names that the API leaves out would lie to them.
 */
import { auditEntry } from "@mcpgw/aws";
import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, ServerStatus } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sampleAuditEvent } from "../../aws/src/store-contract";
import { createApp } from "./app";
import { toolResultResponse, WHOLE_BODY_CHARS } from "./gateway/result-body";
import * as views from "./views";

const ADMIN_TOKEN = "unit-admin-token-views-4c1d";

/** A server view that names every field it may carry, its status included: nothing else passes. */
const ExactServer = views.ServerView.extend({ status: ServerStatus.strict() }).strict();

/** An instance as a thread summary names it. */
const Registered = views.ThreadSummaryView.shape.instances.element;

/** The app over a memory store, and an admin request that answers its JSON body (asserting `status`). */
function adminApp() {
  const store = createMemoryStore();
  const app = createApp({
    store,
    logger: createLogger({ level: "error", sink: () => {} }),
    adminToken: ADMIN_TOKEN,
    allowPrivateUpstreams: false,
  });
  const call = async (method: string, path: string, status: number, body?: unknown): Promise<unknown> => {
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const response = await app.request(path, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBe(status);
    return JSON.parse(text);
  };
  return { store, call };
}

/** Parses `value` with `schema`, failing the test with zod's issues (an unnamed key is one). */
function exactly<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  expect(parsed.error?.issues ?? []).toEqual([]);
  return parsed.data as z.infer<T>;
}

describe("the answers the console reads are exactly their schemas", () => {
  it("servers of both transports, before and after attempts, alone and listed", async () => {
    // Prepare: an HTTP server with headers and OAuth, a stdio server with env, args and a secret file
    const { store, call } = adminApp();
    await call("PUT", "/v1/secrets/gh", 200, { values: { TOKEN: "t0ken-value" } });
    const http = exactly(
      ExactServer,
      await call("POST", "/v1/servers", 201, {
        name: "docs",
        url: "https://docs.example.com/mcp",
        headers: { Authorization: "Bearer abc123", "X-Team": "core" },
        auth: { type: "oauth", mode: "shared", scopes: ["read"] },
      }),
    );
    const stdio = exactly(
      ExactServer,
      await call("POST", "/v1/servers", 201, {
        name: "files",
        command: "node",
        args: ["server.js", "{{secret_file}}"],
        env: { MODE: "fast" },
        secretRef: "gh",
        secretFormat: "json",
        isolation: "per_caller",
        limits: { cpuSeconds: 60, memoryMiB: 256, processes: 64 },
      }),
    );
    expect(stdio.limits).toEqual({ cpuSeconds: 60, memoryMiB: 256, processes: 64 });
    const at = new Date().toISOString();
    await store.statuses.recordAttempt(
      http.id,
      1,
      { ok: true, at, latencyMs: 12, toolCount: 1, authorization: "authorized", credentialExpiresAt: at },
      {
        tools: [{ name: "search", description: "Finds pages", inputSchema: { type: "object" } }],
        profile: { protocolVersion: "2025-06-18", capabilities: { tools: {} } },
      },
    );
    await store.statuses.recordAttempt(stdio.id, 1, {
      ok: false,
      at,
      reason: "not_responding",
      error: "deadline exceeded",
    });
    await store.latency.record(http.id, { at: Date.now(), kind: "probe", ms: 12, ok: true });

    // Act
    const connected = exactly(ExactServer, await call("GET", `/v1/servers/${http.id}`, 200));
    const failed = exactly(ExactServer, await call("GET", `/v1/servers/${stdio.id}?reveal=env`, 200));
    const page = exactly(views.ServerList.strict(), await call("GET", "/v1/servers?limit=1", 200));
    const rest = await call("GET", `/v1/servers?limit=1&cursor=${page.nextCursor}`, 200);
    const tools = exactly(views.ToolList.strict(), await call("GET", `/v1/servers/${http.id}/tools`, 200));
    const latency = exactly(
      views.LatencyHistoryView.strict(),
      await call("GET", `/v1/servers/${http.id}/latency`, 200),
    );

    // Assess: every listed server is exact too, and the fixtures reached the fields they stand for
    for (const server of [...page.servers, ...exactly(views.ServerList.strict(), rest).servers])
      exactly(ExactServer, server);
    expect(connected.status).toMatchObject({ state: "connected", protocolVersion: "2025-06-18" });
    expect(connected.status.authorization).toBe("authorized");
    expect(failed.status).toMatchObject({ state: "failed", reason: "not_responding" });
    expect(failed.isolation).toBe("per_caller");
    const patched = exactly(
      ExactServer,
      await call("PATCH", `/v1/servers/${stdio.id}`, 200, { isolation: "shared" }),
    );
    expect(patched.isolation).toBe("shared");
    // An HTTP server relays no out-of-call logs unless the admin says so; the answer shows which.
    expect(connected.relaySessionLogs).toBe(false);
    const relaying = exactly(
      ExactServer,
      await call("PATCH", `/v1/servers/${http.id}`, 200, { relaySessionLogs: true }),
    );
    expect(relaying.relaySessionLogs).toBe(true);
    expect(exactly(ExactServer, await call("GET", `/v1/servers/${http.id}`, 200)).relaySessionLogs).toBe(
      true,
    );
    expect(tools.tools.map((tool) => tool.name)).toEqual(["search"]);
    expect(latency.points).toHaveLength(1);
  });

  it("an import's preview and result, and the secrets list", async () => {
    const { call } = adminApp();
    const document = { mcpServers: { docs: { url: "https://docs.example.com/mcp" } } };

    const preview = exactly(
      views.ImportPreview.strict(),
      await call("POST", "/v1/servers/import?dryRun=true", 200, document),
    );
    const result = exactly(
      views.ImportResult.strict(),
      await call("POST", "/v1/servers/import", 201, document),
    );
    await call("PUT", "/v1/secrets/gh", 200, { values: { TOKEN: "t0ken-value" } });
    const secrets = (await call("GET", "/v1/secrets", 200)) as { secrets: unknown[] };

    expect(preview.created).toEqual(["docs"]);
    for (const server of result.servers) exactly(ExactServer, server);
    expect(secrets.secrets.map((secret) => exactly(views.SecretSummaryView.strict(), secret).name)).toEqual([
      "gh",
    ]);
  });

  it("the console's sign-in options and session", async () => {
    const { call } = adminApp();

    const options = exactly(views.ConsoleSignInOptions.strict(), await call("GET", "/console/sign-in", 200));
    const session = exactly(
      views.ConsoleSession.strict(),
      await call("POST", "/console/session", 201, { token: ADMIN_TOKEN }),
    );

    expect(options.provider).toBeNull();
    expect(session.csrfToken).not.toBe("");
  });

  it("keys created and listed, and access mappings set and listed", async () => {
    const { call } = adminApp();
    const docs = exactly(
      ExactServer,
      await call("POST", "/v1/servers", 201, { name: "docs", url: "https://docs.example.com/mcp" }),
    );

    const created = exactly(
      views.NewApiKeyView.strict(),
      await call("POST", "/v1/keys", 201, { name: "ci", servers: ["docs"] }),
    );
    const limited = exactly(
      views.NewApiKeyView.strict(),
      await call("POST", "/v1/keys", 201, { name: "bot", servers: ["docs"], rateLimit: { perMinute: 600 } }),
    );
    const owned = exactly(
      views.NewApiKeyView.strict(),
      await call("POST", "/v1/keys", 201, { name: "ada's", owner: "user:ada" }),
    );
    const keys = exactly(views.ApiKeyList.strict(), await call("GET", "/v1/keys", 200));
    const mapping = exactly(
      views.AccessMappingView.strict(),
      await call("PUT", "/v1/access/user:ada", 200, { servers: ["docs"] }),
    );
    await call("PUT", "/v1/access/group:everyone", 200, { servers: null });
    const access = exactly(views.AccessMappingList.strict(), await call("GET", "/v1/access", 200));

    expect(created.serverIds).toEqual([docs.id]);
    expect(owned.owner).toBe("user:ada");
    const listed = keys.keys.map((key) => exactly(views.ApiKeyView.strict(), key));
    expect(listed.map((key) => [key.name, key.servers, key.owner]).sort()).toEqual([
      ["ada's", null, "user:ada"],
      ["bot", ["docs"], null],
      ["ci", ["docs"], null],
    ]);
    expect(limited.rateLimit).toEqual({ perMinute: 600 });
    expect(listed.find((key) => key.id === limited.id)?.rateLimit).toEqual({ perMinute: 600 });
    expect(listed.find((key) => key.id === created.id)?.rateLimit).toBeNull();
    expect(mapping.servers).toEqual(["docs"]);
    expect(
      access.access.map((entry) => exactly(views.AccessMappingView.strict(), entry).subject).sort(),
    ).toEqual(["group:everyone", "user:ada"]);
  });

  it("the tool catalogue, a chat's toggles, and threads listed and shown", async () => {
    // Prepare: a connected HTTP server with a tool, a thread-scoped stdio server with an instance
    const { store, call } = adminApp();
    const docs = exactly(
      ExactServer,
      await call("POST", "/v1/servers", 201, { name: "docs", url: "https://docs.example.com/mcp" }),
    );
    const files = exactly(
      ExactServer,
      await call("POST", "/v1/servers", 201, { name: "files", command: "node", scope: "thread" }),
    );
    await store.statuses.recordAttempt(
      docs.id,
      1,
      { ok: true, at: new Date().toISOString(), latencyMs: 3, toolCount: 1 },
      {
        tools: [{ name: "search", description: "Finds pages", inputSchema: { type: "object" } }],
        profile: { protocolVersion: "2025-06-18", capabilities: { tools: {} } },
      },
    );
    await store.threads.register({
      threadId: "t1",
      serverId: files.id,
      worktreeRoot: "/work/t1",
      owner: "admin",
    });

    // Act
    const tools = exactly(views.CatalogToolList.strict(), await call("GET", "/v1/tools", 200));
    const toggle = exactly(
      views.ChatToggleView.strict(),
      await call("PUT", `/v1/chats/c1/servers/${docs.id}`, 200, { enabled: false }),
    );
    const toggles = exactly(views.ChatToggleList.strict(), await call("GET", "/v1/chats/c1/servers", 200));
    const threads = exactly(views.ThreadList.strict(), await call("GET", "/v1/threads", 200));
    const thread = exactly(views.ThreadView.strict(), await call("GET", "/v1/threads/t1", 200));
    const threadTools = exactly(
      views.CatalogToolList.strict(),
      await call("GET", "/v1/threads/t1/tools", 200),
    );

    // Assess: every item is exact too
    expect(
      [...tools.tools, ...threadTools.tools].map(
        (tool) => exactly(views.CatalogToolView.strict(), tool).name,
      ),
    ).toEqual(["docs__search", "docs__search"]);
    expect(toggle).toEqual({ id: docs.id, name: "docs", enabled: false });
    expect(toggles.servers.map((entry) => exactly(views.ChatToggleView.strict(), entry).enabled)).toEqual([
      false,
      true,
    ]);
    const summary = exactly(views.ThreadSummaryView.strict(), threads.threads[0]);
    expect(summary.instances.map((instance) => exactly(Registered.strict(), instance))).toEqual([
      { serverId: files.id, server: "files" },
    ]);
    expect(
      thread.instances.map((instance) => exactly(views.ThreadRegistrationView.strict(), instance)),
    ).toEqual([expect.objectContaining({ threadId: "t1", server: "files", worktreeRoot: "/work/t1" })]);
  });

  it("a tool result as the call route writes it, whole and streamed", async () => {
    // (The route's body is this writer's: no upstream answers a call in the unit tier.)
    const result = {
      content: [
        { type: "text" as const, text: "found" },
        { type: "image" as const, data: "aGk=", mimeType: "image/png" },
      ],
      structuredContent: { hits: 1 },
      _meta: { trace: "t-1" },
      isError: false,
    };
    const large = {
      content: [{ type: "text" as const, text: "x".repeat(WHOLE_BODY_CHARS + 1) }],
      isError: true,
    };

    const whole = exactly(views.CallResultView.strict(), await toolResultResponse(result).json());
    const streamed = exactly(views.CallResultView.strict(), await toolResultResponse(large).json());

    expect(whole).toMatchObject({ text: "found", isError: false, _meta: { trace: "t-1" } });
    expect(streamed.text).toHaveLength(WHOLE_BODY_CHARS + 1);
  });
});

describe("a server's pinning", () => {
  it("shows its own setting, else the deployment's default (PINNING_DEFAULT), and 0 pending changes", async () => {
    const app = createApp({
      store: createMemoryStore(),
      logger: createLogger({ level: "error", sink: () => {} }),
      adminToken: ADMIN_TOKEN,
      allowPrivateUpstreams: false,
      pinningDefault: "auto",
    });
    const create = async (body: Record<string, unknown>) => {
      const response = await app.request("/v1/servers", {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return exactly(ExactServer, await response.json());
    };

    const unset = await create({ name: "unset", url: "https://a.example.com/mcp" });
    const own = await create({ name: "own", command: "node", pinning: "off" });

    expect([unset.pinning, own.pinning]).toEqual(["auto", "off"]);
    expect(unset.status.pendingChanges).toBe(0);
  });
});

describe("a window's call stats", () => {
  it("are exactly their schema: the window, every bucket and the totals", async () => {
    const { store, call } = adminApp();
    const at = Date.now() - 1_000;
    await store.audit.append([auditEntry(sampleAuditEvent(at, { serverName: "docs", durationMs: 12 }))], {
      retentionDays: 30,
    });
    const Figures = views.AuditStatsView.shape.totals.strict();
    const ExactStats = views.AuditStatsView.extend({
      buckets: z.array(views.AuditStatsView.shape.buckets.element.strict()),
      totals: Figures,
    }).strict();
    const stats = exactly(ExactStats, await call("GET", "/v1/audit/stats?server=docs", 200));
    expect(stats.totals).toEqual({ calls: 1, errors: 0, toolErrors: 0, errorRate: 0, p50Ms: 12, p95Ms: 12 });
    // The call's minute (the last bucket, or the one before when a minute began in the second since).
    const minute = new Date(Math.floor(at / 60_000) * 60_000).toISOString();
    expect(stats.buckets.find((bucket) => bucket.at === minute)?.calls).toBe(1);
  });
});
