/** Admin API, servers: every route and every error path, in-process through `app.request`. */
import { createApp } from "@mcpgw/api";
import { createLogger, type ServerProfile, type ToolInfo } from "@mcpgw/core";
import { beforeEach, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { createTestStore } from "../support/aws";
import {
  createServer,
  expectJson,
  expectProblem,
  freshApp,
  httpServer,
  type Json,
  stdioServer,
  type TestApp,
  takeJobs,
} from "./helpers";

const MIB = 1024 * 1024;
const SERVER_KEYS = [
  "id",
  "name",
  "transport",
  "enabled",
  "timeoutSeconds",
  "scope",
  "version",
  "createdAt",
  "updatedAt",
  "status",
];
const STATUS_KEYS = [
  "state",
  "reason",
  "error",
  "toolCount",
  "lastConnectionAttemptAt",
  "lastSuccessfulConnectionAt",
  "lastConnectionFailureAt",
  "lastConnectionLatencyMs",
  "lastError",
  "nextAttemptAt",
  "pendingChanges",
];

let app: TestApp;
beforeEach(async () => {
  app = await freshApp();
});

describe("POST /v1/servers", () => {
  it("creates an http server: 201, status connecting, transport inferred from url, a connect job queued", async () => {
    const response = await app.call("POST", "/v1/servers", {
      name: "remote",
      url: "https://remote.example.com/mcp",
      headers: { "X-Team": "blue" },
      timeoutSeconds: 20,
    });

    const server = await expectJson(response, 201);
    expect(server).toMatchObject({
      name: "remote",
      transport: "http",
      enabled: true,
      url: "https://remote.example.com/mcp",
      headers: { "X-Team": "[SECRET]" },
      timeoutSeconds: 20,
      scope: "project",
      version: 1,
      status: {
        state: "connecting",
        reason: null,
        error: null,
        toolCount: 0,
        lastConnectionAttemptAt: null,
        lastSuccessfulConnectionAt: null,
        lastConnectionFailureAt: null,
        lastConnectionLatencyMs: null,
        lastError: null,
        nextAttemptAt: null,
      },
    });
    expect(Object.keys(server)).toEqual(expect.arrayContaining(SERVER_KEYS));
    expect(Object.keys(server.status as Json).sort()).toEqual([...STATUS_KEYS].sort());
    expect(server.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(server.createdAt as string)).not.toBeNaN();
    expect(server.updatedAt).toBe(server.createdAt);
    expect(server).not.toHaveProperty("command");
    expect(server.status).not.toHaveProperty("generation");
    expect(await takeJobs(app.store)).toEqual([{ type: "connect", serverId: server.id, generation: 1 }]);
  });

  it("creates a stdio server with defaults, transport inferred from command, env values masked", async () => {
    const response = await app.call("POST", "/v1/servers", {
      name: "local",
      command: "npx",
      args: ["-y", "@example/server"],
      env: { LOG_LEVEL: "debug" },
    });

    const server = await expectJson(response, 201);
    expect(server).toMatchObject({
      name: "local",
      transport: "stdio",
      enabled: true,
      command: "npx",
      args: ["-y", "@example/server"],
      env: { LOG_LEVEL: "[SECRET]" },
      timeoutSeconds: 30,
      scope: "project",
      version: 1,
      status: { state: "connecting" },
    });
    expect(server).not.toHaveProperty("url");
    expect(await takeJobs(app.store)).toEqual([{ type: "connect", serverId: server.id, generation: 1 }]);
  });

  it("accepts an explicit transport and thread scope with a secret reference", async () => {
    const server = await createServer(app, {
      transport: "stdio",
      name: "per-thread",
      command: "node",
      args: ["server.js", "--root", "{{worktree_root}}"],
      scope: "thread",
      secretRef: "team-creds",
      secretFormat: "json",
    });

    expect(server).toMatchObject({
      transport: "stdio",
      scope: "thread",
      secretRef: "team-creds",
      secretFormat: "json",
    });
  });

  it("creates a disabled server settled as disabled and enqueues nothing", async () => {
    const server = await createServer(app, httpServer("off", { enabled: false }));

    expect(server).toMatchObject({ enabled: false, status: { state: "disabled" } });
    expect(await takeJobs(app.store)).toEqual([]);
  });

  it("refuses a duplicate name with 409 server.name_taken and keeps the first server", async () => {
    const first = await createServer(app, httpServer("dup"));

    const body = await expectProblem(
      await app.call("POST", "/v1/servers", stdioServer("dup")),
      409,
      "server.name_taken",
    );

    expect(body.detail).toContain("dup");
    const kept = await expectJson(await app.call("GET", "/v1/servers/dup"), 200);
    expect(kept).toMatchObject({ id: first.id, transport: "http" });
  });

  it("rejects unknown body fields with 400 naming them", async () => {
    const body = await expectProblem(
      await app.call("POST", "/v1/servers", httpServer("extra", { colour: "red" })),
      400,
      "request.invalid",
    );

    expect(body.detail).toContain("colour");
    expect(await listNames()).toEqual([]);
  });

  it.each([
    ["no name", { url: "https://x.example.com/mcp" }],
    ["neither url nor command", { name: "nothing" }],
    ["a bad name", httpServer("has space")],
    ["a name with __", httpServer("a__b")],
    ["a wrong type", httpServer("typed", { timeoutSeconds: "30" })],
    ["a timeout out of range", httpServer("slow", { timeoutSeconds: 0 })],
    ["an empty command", { name: "blank", command: "   " }],
    ["an unknown transport", { name: "ws", transport: "websocket", url: "https://x.example.com" }],
    ["a URL with credentials", { name: "creds", url: "https://user:pass@x.example.com/mcp" }],
    ["a masked Authorization", httpServer("masked", { headers: { Authorization: "Bearer [SECRET]" } })],
    ["a body that is not an object", ["not", "an", "object"]],
  ])("rejects %s with 400 problem+json", async (_, input) => {
    await expectProblem(await app.call("POST", "/v1/servers", input), 400);
    expect(await listNames()).toEqual([]);
  });

  it("rejects malformed JSON with 400 request.malformed_json", async () => {
    await expectProblem(
      await app.call("POST", "/v1/servers", '{"name": "x", "url": '),
      400,
      "request.malformed_json",
    );
  });

  it("rejects a body over 1 MiB with 413 request.too_large", async () => {
    const huge = JSON.stringify(httpServer("big", { headers: { "X-Pad": "a".repeat(MIB) } }));

    await expectProblem(await app.call("POST", "/v1/servers", huge), 413, "request.too_large");
    expect(await listNames()).toEqual([]);
  });

  it("reads a body just under 1 MiB (validation answers, not the size limit)", async () => {
    const body = JSON.stringify(httpServer("near-limit", { padding: "a".repeat(MIB - 200) }));
    expect(body.length).toBeLessThan(MIB);

    const problem = await expectProblem(await app.call("POST", "/v1/servers", body), 400, "request.invalid");

    expect(problem.detail).toContain("padding");
  });

  it.each([
    ["the metadata address", "http://169.254.169.254/latest/meta-data/"],
    ["the metadata address as IPv4-mapped IPv6", "http://[::ffff:169.254.169.254]/"],
    ["the metadata address as an integer", "http://2852039166/"],
    ["the metadata address in hex", "http://0xa9fea9fe/"],
    ["the ECS credentials address", "http://169.254.170.2/v2/credentials"],
    ["a link-local address", "http://169.254.1.1/mcp"],
  ])("refuses %s with 400 server.url_forbidden", async (_, url) => {
    const body = await expectProblem(
      await app.call("POST", "/v1/servers", { name: "meta", url }),
      400,
      "server.url_forbidden",
    );

    expect(body.detail).not.toContain("/latest/meta-data");
    expect(await listNames()).toEqual([]);
    expect(await takeJobs(app.store)).toEqual([]);
  });

  it.each([["file:///etc/passwd"], ["gopher://example.com/"], ["ftp://example.com/mcp"], ["not a url"]])(
    "refuses the non-http(s) URL %s with 400",
    async (url) => {
      await expectProblem(await app.call("POST", "/v1/servers", { name: "bad-url", url }), 400);
      expect(await listNames()).toEqual([]);
    },
  );

  it("refuses loopback and private upstreams when the deployment does not allow them", async () => {
    const strict = await freshApp({ allowPrivateUpstreams: false });

    for (const url of ["http://127.0.0.1:8080/mcp", "http://10.0.0.5/mcp", "http://localhost:3000/mcp"]) {
      await expectProblem(
        await strict.call("POST", "/v1/servers", { name: "private", url }),
        400,
        "server.url_forbidden",
      );
    }
    await createServer(app, { name: "private", url: "http://127.0.0.1:8080/mcp" });
  });
});

describe("GET /v1/servers", () => {
  it("lists nothing on an empty table", async () => {
    expect(await expectJson(await app.call("GET", "/v1/servers"), 200)).toEqual({ servers: [] });
  });

  it("lists every server sorted by name, each with its status", async () => {
    for (const name of ["zeta", "alpha", "mid-2", "mid-10"]) await createServer(app, httpServer(name));
    await createServer(app, stdioServer("beta", { enabled: false }));

    const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);

    const names = servers.map((server) => server.name);
    expect(names).toEqual(["alpha", "beta", "mid-10", "mid-2", "zeta"]);
    for (const server of servers) {
      expect(Object.keys(server.status as Json).sort()).toEqual([...STATUS_KEYS].sort());
      expect((server.status as Json).state).toBe(server.name === "beta" ? "disabled" : "connecting");
    }
  });

  it("shows the protocol revision a successful probe reported, in the list and the one server", async () => {
    const modern = await createServer(app, httpServer("modern"));
    const fresh = await createServer(app, httpServer("fresh"));
    await connect(modern.id, [], { protocolVersion: "2026-07-28", capabilities: { tools: {} } });

    const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);
    const one = await expectJson(await app.call("GET", `/v1/servers/${modern.id}`), 200);

    expect(servers.find((s) => s.id === modern.id)?.status).toMatchObject({ protocolVersion: "2026-07-28" });
    expect(servers.find((s) => s.id === fresh.id)?.status).not.toHaveProperty("protocolVersion");
    expect(one.status).toMatchObject({ state: "connected", protocolVersion: "2026-07-28" });
  });

  it("shows when a failed server is tried next (nextAttemptAt), and null once a reconnect supersedes the failure", async () => {
    const down = await createServer(app, httpServer("later"));
    const nextAttemptAt = new Date(Date.now() + 60_000).toISOString();
    await app.store.statuses.recordAttempt(
      down.id,
      1,
      { ok: false, at: new Date().toISOString(), reason: "unreachable", error: "connection refused" },
      undefined,
      { backoff: { failureCount: 2, nextAttemptAt } },
    );

    const failed = await expectJson(await app.call("GET", `/v1/servers/${down.id}`), 200);
    expect((await app.call("POST", `/v1/servers/${down.id}/reconnect`)).status).toBe(202);
    const superseded = await expectJson(await app.call("GET", `/v1/servers/${down.id}`), 200);

    expect(failed.status).toMatchObject({ state: "failed", nextAttemptAt });
    expect(superseded.status).toMatchObject({ state: "connecting", nextAttemptAt: null });
    expect(superseded.status).not.toHaveProperty("failureCount");
  });

  it("shows the latest recorded status of each server", async () => {
    const up = await createServer(app, httpServer("up"));
    const down = await createServer(app, httpServer("down"));
    await connect(up.id, [{ name: "echo", inputSchema: { type: "object" } }]);
    const at = new Date().toISOString();
    await app.store.statuses.recordAttempt(down.id, 1, {
      ok: false,
      at,
      reason: "unreachable",
      error: "connection refused",
    });

    const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);

    expect(servers.find((s) => s.name === "up")?.status).toMatchObject({
      state: "connected",
      toolCount: 1,
      lastConnectionLatencyMs: 42,
    });
    expect(servers.find((s) => s.name === "down")?.status).toMatchObject({
      state: "failed",
      reason: "unreachable",
      error: "connection refused",
      lastConnectionFailureAt: at,
      lastError: "connection refused",
    });
  });
});

describe("GET /v1/servers/{id}", () => {
  it("returns one server by id and by name, with an ETag of its version", async () => {
    const created = await createServer(app, httpServer("finder"));

    const byId = await app.call("GET", `/v1/servers/${created.id}`);
    const byName = await app.call("GET", "/v1/servers/finder");

    expect(byId.headers.get("etag")).toBe('"1"');
    const fromId = await expectJson(byId, 200);
    expect(fromId).toEqual(await expectJson(byName, 200));
    expect(fromId).toMatchObject({ id: created.id, name: "finder", status: { state: "connecting" } });
  });

  it.each([
    ["an unknown name", "/v1/servers/ghost"],
    ["an unknown id", "/v1/servers/00000000-0000-4000-8000-000000000000"],
  ])("answers 404 server.not_found for %s", async (_, path) => {
    const body = await expectProblem(await app.call("GET", path), 404, "server.not_found");
    expect(body.detail).toContain(path.split("/").pop());
  });
});

describe("PATCH /v1/servers/{id}", () => {
  it("updates only the given fields, bumps version and generation, and enqueues a new connect", async () => {
    const created = await createServer(app, httpServer("edit", { headers: { "X-Team": "blue" } }));
    await takeJobs(app.store);

    const response = await app.call("PATCH", `/v1/servers/${created.id}`, {
      url: "https://edit.example.com/v2/mcp",
      timeoutSeconds: 60,
    });

    expect(response.headers.get("etag")).toBe('"2"');
    const updated = await expectJson(response, 200);
    expect(updated).toMatchObject({
      id: created.id,
      name: "edit",
      url: "https://edit.example.com/v2/mcp",
      timeoutSeconds: 60,
      headers: { "X-Team": "[SECRET]" },
      enabled: true,
      version: 2,
      createdAt: created.createdAt,
      status: { state: "connecting" },
    });
    expect(Date.parse(updated.updatedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(created.updatedAt as string),
    );
    expect(await takeJobs(app.store)).toEqual([{ type: "connect", serverId: created.id, generation: 2 }]);
    expect(await expectJson(await app.call("GET", "/v1/servers/edit"), 200)).toMatchObject({
      version: 2,
      url: "https://edit.example.com/v2/mcp",
    });
  });

  it("edits a stdio server's command, args and env by name", async () => {
    await createServer(app, stdioServer("tool", { env: { A: "1" } }));

    const updated = await expectJson(
      await app.call("PATCH", "/v1/servers/tool", { args: ["serve"], env: { B: "2" } }),
      200,
    );

    expect(updated).toMatchObject({ command: "npx", args: ["serve"], env: { B: "[SECRET]" }, version: 2 });
    expect(await app.store.servers.getByName("tool")).toMatchObject({ env: { B: "2" } });
  });

  it("clears a secret reference with null", async () => {
    await createServer(app, stdioServer("ref", { secretRef: "creds", secretFormat: "env" }));

    const updated = await expectJson(await app.call("PATCH", "/v1/servers/ref", { secretRef: null }), 200);

    expect(updated).not.toHaveProperty("secretRef");
    expect(updated).not.toHaveProperty("secretFormat");
  });

  it("settles disabled on enabled:false and enqueues nothing; enabling again enqueues a newer connect", async () => {
    const created = await createServer(app, httpServer("toggle"));
    await takeJobs(app.store);

    const disabled = await expectJson(await app.call("PATCH", "/v1/servers/toggle", { enabled: false }), 200);

    expect(disabled).toMatchObject({ enabled: false, version: 2, status: { state: "disabled" } });
    expect(await takeJobs(app.store)).toEqual([]);
    expect((await app.store.statuses.get(created.id))?.generation).toBe(2);

    const enabled = await expectJson(await app.call("PATCH", "/v1/servers/toggle", { enabled: true }), 200);

    expect(enabled).toMatchObject({ enabled: true, version: 3, status: { state: "connecting" } });
    expect(await takeJobs(app.store)).toEqual([{ type: "connect", serverId: created.id, generation: 3 }]);
  });

  it("supersedes a recorded status: a connected server goes back to connecting on an edit that reaches it", async () => {
    const created = await createServer(app, httpServer("was-up"));
    await connect(created.id, []);

    const updated = await expectJson(
      await app.call("PATCH", "/v1/servers/was-up", { url: "https://was-up.example.com/v2/mcp" }),
      200,
    );

    expect(updated.status).toMatchObject({ state: "connecting", reason: null, error: null });
    // A late result of the superseded attempt is fenced off.
    const stale = await app.store.statuses.recordAttempt(created.id, 1, {
      ok: true,
      at: new Date().toISOString(),
      latencyMs: 1,
      toolCount: 0,
    });
    expect(stale).toBe(false);
  });

  it("keeps a connected status on an edit that does not reach the server (timeout, rename)", async () => {
    const created = await createServer(app, httpServer("stays-up"));
    await connect(created.id, []);

    const updated = await expectJson(
      await app.call("PATCH", "/v1/servers/stays-up", { timeoutSeconds: 5, name: "still-up" }),
      200,
    );

    expect(updated).toMatchObject({ name: "still-up", timeoutSeconds: 5, version: 2 });
    expect(updated.status).toMatchObject({ state: "connected" });
    expect((await app.store.statuses.get(created.id))?.generation).toBe(1);
  });

  it.each([['"1"'], ["1"], ['W/"1"']])(
    "applies the edit when If-Match %s matches the version",
    async (tag) => {
      await createServer(app, httpServer("guarded"));

      const updated = await expectJson(
        await app.call("PATCH", "/v1/servers/guarded", { timeoutSeconds: 9 }, { "if-match": tag }),
        200,
      );

      expect(updated).toMatchObject({ timeoutSeconds: 9, version: 2 });
    },
  );

  it.each([['"1", "2"'], ['W/"7", "1"'], ["*"]])(
    "applies the edit when If-Match %s names the version or any (a list, *)",
    async (tag) => {
      await createServer(app, httpServer("guarded"));

      const updated = await expectJson(
        await app.call("PATCH", "/v1/servers/guarded", { timeoutSeconds: 9 }, { "if-match": tag }),
        200,
      );

      expect(updated).toMatchObject({ timeoutSeconds: 9, version: 2 });
    },
  );

  it.each([[""], [" "], ["abc"], ['"1'], ['"1",'], ["*, 1"]])(
    "refuses the empty or malformed If-Match %j with 400 request.invalid (never read as version 0)",
    async (tag) => {
      await createServer(app, httpServer("guarded"));
      await takeJobs(app.store);

      const problem = await expectProblem(
        await app.call("PATCH", "/v1/servers/guarded", { timeoutSeconds: 9 }, { "if-match": tag }),
        400,
        "request.invalid",
      );

      expect(problem.errors).toEqual([{ field: "if-match", message: 'Must be a version like "3".' }]);
      expect(await expectJson(await app.call("GET", "/v1/servers/guarded"), 200)).toMatchObject({
        version: 1,
      });
      expect(await takeJobs(app.store)).toEqual([]);
    },
  );

  it("refuses a stale If-Match with 412 request.precondition_failed and changes nothing", async () => {
    await createServer(app, httpServer("guarded"));
    await app.call("PATCH", "/v1/servers/guarded", { timeoutSeconds: 9 });
    await takeJobs(app.store);

    await expectProblem(
      await app.call("PATCH", "/v1/servers/guarded", { timeoutSeconds: 99 }, { "if-match": '"1"' }),
      412,
      "request.precondition_failed",
    );

    expect(await expectJson(await app.call("GET", "/v1/servers/guarded"), 200)).toMatchObject({
      timeoutSeconds: 9,
      version: 2,
    });
    expect(await takeJobs(app.store)).toEqual([]);
  });

  it("renames a server: the new name resolves to the same id, the old one is free again", async () => {
    const created = await createServer(app, httpServer("old-name"));

    const renamed = await expectJson(
      await app.call("PATCH", "/v1/servers/old-name", { name: "new-name" }),
      200,
    );

    expect(renamed).toMatchObject({ id: created.id, name: "new-name", version: 2 });
    expect(await expectJson(await app.call("GET", "/v1/servers/new-name"), 200)).toMatchObject({
      id: created.id,
    });
    await expectProblem(await app.call("GET", "/v1/servers/old-name"), 404, "server.not_found");
    await createServer(app, httpServer("old-name"));
    expect(await listNames()).toEqual(["new-name", "old-name"]);
  });

  it("refuses a rename onto a taken name with 409 server.name_taken and changes nothing", async () => {
    const first = await createServer(app, httpServer("first"));
    const second = await createServer(app, httpServer("second"));

    await expectProblem(
      await app.call("PATCH", `/v1/servers/${second.id}`, { name: "first" }),
      409,
      "server.name_taken",
    );

    expect(await expectJson(await app.call("GET", "/v1/servers/first"), 200)).toMatchObject({ id: first.id });
    expect(await expectJson(await app.call("GET", "/v1/servers/second"), 200)).toMatchObject({
      id: second.id,
      version: 1,
    });
  });

  it("answers 404 server.not_found for a missing server", async () => {
    await expectProblem(
      await app.call("PATCH", "/v1/servers/ghost", { enabled: false }),
      404,
      "server.not_found",
    );
  });

  it.each([
    ["an unknown field", { colour: "red" }],
    ["a changed transport", { transport: "stdio" }],
    ["a field of the other transport", { command: "npx" }],
    ["a wrong type", { enabled: "yes" }],
    ["a bad name", { name: "no spaces allowed" }],
    ["a bad URL", { url: "file:///etc/passwd" }],
  ])("rejects %s with 400 and keeps the server unchanged", async (_, patch) => {
    await createServer(app, httpServer("stable"));

    await expectProblem(await app.call("PATCH", "/v1/servers/stable", patch), 400);

    expect(await expectJson(await app.call("GET", "/v1/servers/stable"), 200)).toMatchObject({
      version: 1,
      url: "https://stable.example.com/mcp",
    });
  });

  it("refuses a metadata URL with 400 server.url_forbidden", async () => {
    await createServer(app, httpServer("stable"));

    await expectProblem(
      await app.call("PATCH", "/v1/servers/stable", { url: "http://[::ffff:169.254.169.254]/" }),
      400,
      "server.url_forbidden",
    );
  });

  it("rejects malformed JSON (400) and a body over 1 MiB (413)", async () => {
    await createServer(app, httpServer("stable"));

    await expectProblem(await app.call("PATCH", "/v1/servers/stable", "{"), 400, "request.malformed_json");
    await expectProblem(
      await app.call(
        "PATCH",
        "/v1/servers/stable",
        JSON.stringify({ url: `https://x.example.com/${"a".repeat(MIB)}` }),
      ),
      413,
      "request.too_large",
    );
  });
});

describe("DELETE /v1/servers/{id}", () => {
  it("deletes with 204 and an empty body; afterwards the server is 404 and its name is free", async () => {
    const created = await createServer(app, httpServer("doomed"));

    const response = await app.call("DELETE", `/v1/servers/${created.id}`);

    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    await expectProblem(await app.call("GET", `/v1/servers/${created.id}`), 404, "server.not_found");
    await expectProblem(await app.call("DELETE", `/v1/servers/${created.id}`), 404, "server.not_found");
    expect(await listNames()).toEqual([]);
    await createServer(app, httpServer("doomed"));
  });

  it("deletes by name, including the tool catalogue", async () => {
    const created = await createServer(app, httpServer("cat"));
    await connect(created.id, [{ name: "echo", inputSchema: { type: "object" } }]);

    expect((await app.call("DELETE", "/v1/servers/cat")).status).toBe(204);

    expect(await app.store.statuses.getCatalog(created.id)).toBeUndefined();
    expect(await app.store.statuses.get(created.id)).toBeUndefined();
  });

  it("answers 404 server.not_found for a missing server", async () => {
    await expectProblem(await app.call("DELETE", "/v1/servers/ghost"), 404, "server.not_found");
  });
});

describe("POST /v1/servers/{id}/reconnect", () => {
  it("answers 202 with the server connecting and enqueues a connect of a newer generation", async () => {
    const created = await createServer(app, httpServer("flaky"));
    await takeJobs(app.store);
    await app.store.statuses.recordAttempt(created.id, 1, {
      ok: false,
      at: new Date().toISOString(),
      reason: "not_responding",
      error: "deadline exceeded",
    });

    const server = await expectJson(await app.call("POST", "/v1/servers/flaky/reconnect"), 202);

    expect(server).toMatchObject({
      id: created.id,
      version: 1,
      status: { state: "connecting", reason: null, error: null, lastError: "deadline exceeded" },
    });
    expect(await takeJobs(app.store)).toEqual([{ type: "connect", serverId: created.id, generation: 2 }]);
  });

  it("refuses a disabled server with 409 and enqueues nothing", async () => {
    await createServer(app, httpServer("sleeping", { enabled: false }));

    await expectProblem(await app.call("POST", "/v1/servers/sleeping/reconnect"), 409, "server.unavailable");

    expect(await takeJobs(app.store)).toEqual([]);
  });

  it("answers 404 server.not_found for a missing server", async () => {
    await expectProblem(await app.call("POST", "/v1/servers/ghost/reconnect"), 404, "server.not_found");
  });
});

describe("GET /v1/servers/{id}/tools", () => {
  const tools: ToolInfo[] = [
    {
      name: "search",
      description: "Search the docs",
      inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    },
    { name: "ping", inputSchema: { type: "object" } },
  ];

  it("is empty for a server that has not connected yet", async () => {
    await createServer(app, httpServer("fresh"));

    expect(await expectJson(await app.call("GET", "/v1/servers/fresh/tools"), 200)).toEqual({ tools: [] });
  });

  it("lists the catalogue of a connected server as {name, description, inputSchema}", async () => {
    const created = await createServer(app, httpServer("docs"));
    await connect(created.id, tools);

    const body = await expectJson(await app.call("GET", `/v1/servers/${created.id}/tools`), 200);

    expect(body).toEqual({
      tools: [
        {
          name: "search",
          description: "Search the docs",
          inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
        },
        { name: "ping", inputSchema: { type: "object" } },
      ],
    });
  });

  it("is empty again once the server is disabled or reconnecting", async () => {
    const created = await createServer(app, httpServer("docs"));
    await connect(created.id, tools);

    await app.call("POST", "/v1/servers/docs/reconnect");
    expect(await expectJson(await app.call("GET", "/v1/servers/docs/tools"), 200)).toEqual({ tools: [] });

    await app.call("PATCH", "/v1/servers/docs", { enabled: false });
    expect(await expectJson(await app.call("GET", "/v1/servers/docs/tools"), 200)).toEqual({ tools: [] });
  });

  it("answers 404 server.not_found for a missing server", async () => {
    await expectProblem(await app.call("GET", "/v1/servers/ghost/tools"), 404, "server.not_found");
  });
});

describe("authentication", () => {
  const routes: Array<[string, string, unknown?]> = [
    ["GET", "/v1/servers"],
    ["POST", "/v1/servers", httpServer("intruder")],
    ["POST", "/v1/servers/import", { mcpServers: { intruder: { url: "https://x.example.com" } } }],
    ["GET", "/v1/servers/victim"],
    ["PATCH", "/v1/servers/victim", { enabled: false }],
    ["DELETE", "/v1/servers/victim"],
    ["POST", "/v1/servers/victim/reconnect"],
    ["GET", "/v1/servers/victim/tools"],
    ["GET", "/v1/secrets"],
    ["PUT", "/v1/secrets/stolen", { values: { a: "b" } }],
    ["DELETE", "/v1/secrets/victim-secret"],
    ["GET", "/v1/nonexistent"],
  ];
  const badCredentials: Array<[string, Record<string, string>]> = [
    ["no Authorization header", {}],
    ["a wrong token", { authorization: "Bearer not-the-token" }],
    ["the token with a wrong scheme", { authorization: `Basic ${TEST_ADMIN_TOKEN}` }],
    ["a token prefix", { authorization: `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}` }],
    ["an empty bearer", { authorization: "Bearer " }],
  ];

  it.each(badCredentials)("answers 401 problem+json on every /v1 route with %s", async (_, headers) => {
    await createServer(app, httpServer("victim"));
    await app.store.secrets.put("victim-secret", { k: "v" });
    await takeJobs(app.store);

    for (const [method, path, body] of routes) {
      const response = await app.app.request(path, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const problem = await expectProblem(response, 401, "auth.unauthorized");
      expect(problem.title).toBe("Unauthorized");
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }

    // Nothing changed behind the refusals.
    const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);
    expect(servers).toMatchObject([{ name: "victim", enabled: true, version: 1 }]);
    expect((await app.store.secrets.list()).map((s) => s.name)).toEqual(["victim-secret"]);
    expect(await takeJobs(app.store)).toEqual([]);
  });

  it("accepts the token case-insensitively on the scheme", async () => {
    const response = await app.app.request("/v1/servers", {
      headers: { authorization: `bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
  });

  it("leaves /healthz open", async () => {
    const response = await app.app.request("/healthz");
    expect(response.status).toBe(200);
  });
});

describe("errors", () => {
  it("answers an unknown route with 404 problem+json", async () => {
    await expectProblem(await app.call("GET", "/v1/nothing-here"), 404, "request.not_found");
  });

  it.each([
    ["PUT", "/v1/servers", "GET, HEAD, POST"],
    ["PUT", "/v1/servers/any", "DELETE, GET, HEAD, PATCH"],
    ["PUT", "/v1/servers/import", "POST"],
    ["OPTIONS", "/v1/tools", "GET, HEAD"],
    ["DELETE", "/v1/tools/a__b/call", "POST"],
    ["POST", "/healthz", "GET, HEAD"],
  ])("answers %s %s with 405 request.method_not_allowed and Allow: %s", async (method, path, allow) => {
    const response = await app.call(method, path);

    expect(response.headers.get("allow")).toBe(allow);
    const problem = await expectProblem(response, 405, "request.method_not_allowed");
    expect(problem.allow).toEqual(allow.split(", "));
  });

  it("still asks for a token before telling which methods a path takes", async () => {
    const response = await app.app.request("/v1/servers", { method: "PUT" });

    await expectProblem(response, 401, "auth.unauthorized");
  });

  it("fails closed when sealing cannot be done: 503 store.unavailable, nothing stored, no secret or key named", async () => {
    // A store whose KMS key does not exist: sealing fails, and so must the write (fail closed). A missing
    // resource is an outage of the store (a bare 500 for anything unexpected: packages/api/src/problem.test.ts).
    const store = await createTestStore({ keyId: "alias/missing-key-for-api-tests" });
    const logs: string[] = [];
    const broken = createApp({
      store,
      logger: createLogger({ sink: (line) => logs.push(line) }),
      adminToken: TEST_ADMIN_TOKEN,
      allowPrivateUpstreams: true,
    });

    const response = await broken.request("/v1/servers", {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(httpServer("sealed", { headers: { Authorization: "Bearer top-secret-value" } })),
    });

    const body = await expectProblem(response, 503, "store.unavailable");
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(body.requestId).toEqual(expect.any(String));
    expect(JSON.stringify(body)).not.toMatch(/kms|alias\/missing|top-secret/i);
    expect(logs.join("\n")).not.toContain("top-secret-value");
    expect(logs.some((line) => JSON.parse(line).requestId === body.requestId)).toBe(true);
    expect(await store.servers.listPlain()).toEqual([]);
  });
});

describe("logs", () => {
  it("are structured JSON lines, each with the request id of the request that caused it", async () => {
    const created = await createServer(app, httpServer("logged", { headers: { "X-Team": "blue" } }));
    await app.call("PATCH", "/v1/servers/logged", { timeoutSeconds: 5 });
    await app.call("POST", "/v1/servers/import", { mcpServers: { other: { url: "https://o.example.com" } } });
    await app.call("PUT", "/v1/secrets/s1", { values: { K: "v" } });
    await app.call("DELETE", `/v1/servers/${created.id}`);
    await app.call("GET", "/v1/servers/ghost");

    const lines = app.logs.map((line) => JSON.parse(line) as Json);

    expect(lines.length).toBeGreaterThanOrEqual(6);
    for (const line of lines) {
      expect(line).toMatchObject({
        time: expect.any(String),
        level: expect.any(String),
        msg: expect.any(String),
      });
      expect(line.requestId, JSON.stringify(line)).toEqual(expect.any(String));
    }
    const access = lines.filter((line) => line.msg === "request");
    expect(access.map((line) => [line.method, line.status])).toEqual([
      ["POST", 201],
      ["PATCH", 200],
      ["POST", 201],
      ["PUT", 200],
      ["DELETE", 204],
      ["GET", 404],
    ]);
    expect(new Set(access.map((line) => line.requestId)).size).toBe(access.length);
  });
});

async function listNames(): Promise<string[]> {
  const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);
  return servers.map((server) => server.name as string);
}

/** Records a successful attempt of the server's current generation, with its catalogue (and profile). */
async function connect(serverId: string, tools: ToolInfo[], profile?: ServerProfile): Promise<void> {
  const status = await app.store.statuses.get(serverId);
  const written = await app.store.statuses.recordAttempt(
    serverId,
    status?.generation ?? 1,
    { ok: true, at: new Date().toISOString(), latencyMs: 42, toolCount: tools.length },
    profile ? { tools, profile } : { tools },
  );
  expect(written).toBe(true);
}
