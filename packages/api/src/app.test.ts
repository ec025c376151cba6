import { createMemoryStore, type MemoryStore } from "@mcpgw/aws/memory";
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { type AppDeps, createApp } from "./app";

const ADMIN_TOKEN = "unit-admin-token-7f3a";

/** The whole app over a memory store: every request in-process through `app.request`. */
function appOver(store: MemoryStore = createMemoryStore(), serve?: AppDeps["serve"]) {
  const app = createApp({
    store,
    logger: createLogger({ level: "error", sink: () => {} }),
    adminToken: ADMIN_TOKEN,
    allowPrivateUpstreams: false,
    ...(serve ? { serve } : {}),
  });
  const request = (method: string, path: string, token?: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(path.startsWith("/mcp") ? { accept: "application/json, text/event-stream" } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  /** A client key made through the admin API. */
  const newKey = async (servers?: string[]) => {
    const response = await request("POST", "/v1/keys", ADMIN_TOKEN, {
      name: "laptop",
      ...(servers ? { servers } : {}),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  };
  return { app, store, request, newKey };
}

const toolsList = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
const ADMIN_ROUTES = ["/v1/servers", "/v1/secrets", "/v1/keys"];
const DATA_PLANE = ["/v1/tools", "/v1/threads", "/v1/chats/c-1/servers"];

describe("route guards: who may call what", () => {
  it("health needs no token", async () => {
    const { request } = appOver();

    expect((await request("GET", "/healthz")).status).toBe(200);
    const ready = await request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ok: true,
      degraded: false,
      checks: { table: "ok", queue: "ok", key: "ok" },
    });
  });

  it("without a token, or with a wrong one, every API route is 401 with a bearer challenge", async () => {
    const { request } = appOver();

    for (const path of [...ADMIN_ROUTES, ...DATA_PLANE]) {
      for (const token of [undefined, "wrong-token", "mgw_not-a-live-key", ""]) {
        const response = await request("GET", path, token);
        expect(response.status, `${path} with ${token}`).toBe(401);
        expect(response.headers.get("www-authenticate")).toBe('Bearer realm="mcp-gateway"');
        expect(await response.json()).toMatchObject({ code: "auth.unauthorized" });
      }
    }
    expect((await request("POST", "/mcp", undefined, toolsList)).status).toBe(401);
    expect((await request("POST", "/mcp/docs", "wrong-token", toolsList)).status).toBe(401);
  });

  it("the admin token may use every route", async () => {
    const { request } = appOver();

    for (const path of [...ADMIN_ROUTES, ...DATA_PLANE])
      expect((await request("GET", path, ADMIN_TOKEN)).status, path).toBe(200);
    expect((await request("POST", "/mcp", ADMIN_TOKEN, toolsList)).status).toBe(200);
  });

  it("a client key gets 403 on admin routes and through on the data plane and /mcp", async () => {
    const { request, newKey } = appOver();
    const { key } = await newKey();

    for (const path of ADMIN_ROUTES) {
      const response = await request("GET", path, key);
      expect(response.status, path).toBe(403);
      expect(await response.json()).toMatchObject({ code: "auth.forbidden" });
    }
    expect((await request("POST", "/v1/keys", key, { name: "escalate" })).status).toBe(403);
    for (const path of DATA_PLANE) expect((await request("GET", path, key)).status, path).toBe(200);
    const mcp = await request("POST", "/mcp", key, toolsList);
    expect(mcp.status).toBe(200);
    expect(await mcp.json()).toMatchObject({ id: 1, result: { tools: [] } });
  });

  it("a revoked key is refused at once", async () => {
    const { request, newKey } = appOver();
    const { id, key } = await newKey();
    expect((await request("GET", "/v1/tools", key)).status).toBe(200);

    expect((await request("DELETE", `/v1/keys/${id}`, ADMIN_TOKEN)).status).toBe(204);

    expect((await request("GET", "/v1/tools", key)).status).toBe(401);
  });

  it("a scoped key sees only its servers' tools; another server is not found on /mcp/{server}", async () => {
    const { store, request, newKey } = appOver();
    const [docs, other] = await Promise.all(
      ["docs", "other"].map((name) =>
        store.servers.create(parseServerSpec({ name, url: `https://${name}.example/mcp` })),
      ),
    );
    for (const server of [docs, other]) {
      if (!server) throw new Error("not created");
      await store.statuses.recordAttempt(
        server.id,
        1,
        { ok: true, at: new Date().toISOString(), latencyMs: 3, toolCount: 1 },
        { tools: [{ name: "search", inputSchema: { type: "object" } }] },
      );
    }
    const { key } = await newKey(["docs"]);

    const tools = (await (await request("GET", "/v1/tools", key)).json()) as {
      tools: Array<{ name: string }>;
    };
    const elsewhere = await request("POST", "/mcp/other", key, toolsList);

    expect(tools.tools.map((tool) => tool.name)).toEqual(["docs__search"]);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ code: "server.not_found" });
    expect((await request("POST", "/mcp/docs", key, toolsList)).status).toBe(200);
  });

  it("a gateway-only app (one Lambda) serves no admin routes, even to the admin token", async () => {
    const { request } = appOver(createMemoryStore(), { admin: false, gateway: true });

    expect((await request("GET", "/v1/servers", ADMIN_TOKEN)).status).toBe(404);
    expect((await request("GET", "/v1/servers")).status).toBe(401);
    expect((await request("GET", "/v1/tools", ADMIN_TOKEN)).status).toBe(200);
  });
});

describe("the server status view", () => {
  it("shows the protocol revision once a probe that reported it succeeded, absent before", async () => {
    const { store, request } = appOver();
    const server = await store.servers.create(
      parseServerSpec({ name: "docs", url: "https://docs.example/mcp" }),
    );
    const status = async (path: string) =>
      ((await (await request("GET", path, ADMIN_TOKEN)).json()) as { status: Record<string, unknown> })
        .status;
    const before = await status(`/v1/servers/${server.id}`);

    await store.statuses.recordAttempt(
      server.id,
      1,
      { ok: true, at: new Date().toISOString(), latencyMs: 3, toolCount: 0 },
      { tools: [], profile: { protocolVersion: "2025-11-25", capabilities: { tools: {} } } },
    );

    expect(before).not.toHaveProperty("protocolVersion");
    expect(await status(`/v1/servers/${server.id}`)).toMatchObject({
      state: "connected",
      protocolVersion: "2025-11-25",
    });
    const list = (await (await request("GET", "/v1/servers", ADMIN_TOKEN)).json()) as {
      servers: Array<{ status: Record<string, unknown> }>;
    };
    expect(list.servers[0]?.status.protocolVersion).toBe("2025-11-25");
  });
});

describe("the Server view derives from the spec schemas", () => {
  it("documents every field of either transport's spec", async () => {
    const { ServerView } = await import("./views");
    const { HttpServerSpec, StdioServerSpec } = await import("@mcpgw/core");

    for (const field of [...Object.keys(HttpServerSpec.shape), ...Object.keys(StdioServerSpec.shape)])
      expect(Object.keys(ServerView.shape), field).toContain(field);
  });
});
