/**
 * Admin API, secrets: the header and env mask rules, the secret store routes, and the sentinel sweep —
 * secrets planted everywhere, every route driven (env reveal and refused URL moves included), and every
 * response, log line, job and raw item searched for them.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { scanTable } from "../support/aws";
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

/** What a pasted mask is told, beside its field. */
const IS_A_MASK = "Is a mask, not a value: type the real value.";
const NO_STORED_VALUE = "The mask stands for no stored value: type the real value.";

let app: TestApp;
beforeEach(async () => {
  app = await freshApp();
});

async function storedHeaders(id: string): Promise<Record<string, string>> {
  const server = await app.store.servers.get(id);
  if (server?.transport !== "http") throw new Error(`server ${id} is not an http server`);
  return server.headers;
}

describe("header mask rule", () => {
  const TOKEN = "Bearer tok-0a1b2c3d4e5f";
  const MASKED = { Authorization: "Bearer [SECRET]", "X-Team": "[SECRET]" };

  async function createMasked(): Promise<Json & { id: string }> {
    const server = await createServer(
      app,
      httpServer("masked", { headers: { Authorization: TOKEN, "X-Team": "blue" } }),
    );
    expect(server.headers).toEqual(MASKED);
    return server;
  }

  it("shows Authorization as `<scheme> [SECRET]` and every other header as `[SECRET]` everywhere", async () => {
    const server = await createMasked();

    const one = await expectJson(await app.call("GET", `/v1/servers/${server.id}`), 200);
    const revealed = await expectJson(await app.call("GET", `/v1/servers/${server.id}?reveal=env`), 200);
    const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);
    const reconnected = await expectJson(await app.call("POST", "/v1/servers/masked/reconnect"), 202);
    const patched = await expectJson(
      await app.call("PATCH", "/v1/servers/masked", { timeoutSeconds: 9 }),
      200,
    );

    for (const view of [one, revealed, servers[0], reconnected, patched]) {
      expect(view?.headers).toEqual(MASKED);
    }
    expect(await storedHeaders(server.id)).toEqual({ Authorization: TOKEN, "X-Team": "blue" });
  });

  it("masks a scheme-less value as `[SECRET]` and any header-name casing", async () => {
    const server = await createServer(
      app,
      httpServer("raw", { headers: { authorization: "just-a-token-xyz", "x-key": "Bearer k-xyz" } }),
    );

    expect(server.headers).toEqual({ authorization: "[SECRET]", "x-key": "[SECRET]" });
    expect(JSON.stringify(server)).not.toMatch(/xyz/);
  });

  it("keeps the stored values when their masks are submitted unchanged", async () => {
    const server = await createMasked();

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, {
        headers: { Authorization: "Bearer [SECRET]", "X-Team": "[SECRET]", "X-New": "fresh" },
      }),
      200,
    );

    expect(updated).toMatchObject({ version: 2, headers: { ...MASKED, "X-New": "[SECRET]" } });
    expect(await storedHeaders(server.id)).toEqual({
      Authorization: TOKEN,
      "X-Team": "blue",
      "X-New": "fresh",
    });
  });

  it("keeps the stored value when the mask is submitted under another casing of the name", async () => {
    const server = await createMasked();

    await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, {
        headers: { authorization: "Bearer [SECRET]", "x-team": "[SECRET]" },
      }),
      200,
    );

    expect(await storedHeaders(server.id)).toEqual({ authorization: TOKEN, "x-team": "blue" });
  });

  it("removes a header when the submitted headers leave it out", async () => {
    const server = await createMasked();

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, { headers: { "X-Team": "[SECRET]" } }),
      200,
    );

    expect(updated.headers).toEqual({ "X-Team": "[SECRET]" });
    expect(await storedHeaders(server.id)).toEqual({ "X-Team": "blue" });
  });

  it("replaces a header with any other submitted value", async () => {
    const server = await createMasked();

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, {
        headers: { Authorization: "Token new-value-77", "X-Team": "red" },
      }),
      200,
    );

    expect(updated.headers).toEqual({ Authorization: "Token [SECRET]", "X-Team": "[SECRET]" });
    expect(await storedHeaders(server.id)).toEqual({ Authorization: "Token new-value-77", "X-Team": "red" });
  });

  it("leaves every header alone when a patch does not mention headers", async () => {
    const server = await createMasked();

    await expectJson(await app.call("PATCH", `/v1/servers/${server.id}`, { timeoutSeconds: 12 }), 200);

    expect(await storedHeaders(server.id)).toEqual({ Authorization: TOKEN, "X-Team": "blue" });
  });

  it.each([
    ["a mask of another scheme", { Authorization: "Basic [SECRET]", "X-Team": "[SECRET]" }, "Authorization"],
    [
      "a bare mask for a scheme'd value",
      { Authorization: "[SECRET]", "X-Team": "[SECRET]" },
      "Authorization",
    ],
    [
      "a scheme'd mask for another header",
      { Authorization: "Bearer [SECRET]", "X-Team": "Bearer [SECRET]" },
      "X-Team",
    ],
    ["a mask for a header not stored", { ...MASKED, "X-Other": "[SECRET]" }, "X-Other"],
  ])(
    "refuses %s with 400 server.invalid naming the header, and keeps the stored values",
    async (_, headers, name) => {
      const server = await createMasked();

      const problem = await expectProblem(
        await app.call("PATCH", `/v1/servers/${server.id}`, { headers }),
        400,
        "server.invalid",
      );

      expect(problem.errors).toEqual([{ field: `headers.${name}`, message: NO_STORED_VALUE }]);
      expect(await storedHeaders(server.id)).toEqual({ Authorization: TOKEN, "X-Team": "blue" });
    },
  );

  it("refuses a mask when nothing is stored to keep", async () => {
    const server = await createServer(app, httpServer("plain"));

    await expectProblem(
      await app.call("PATCH", `/v1/servers/${server.id}`, { headers: { Authorization: "Bearer [SECRET]" } }),
      400,
      "server.invalid",
    );
    await expectProblem(
      await app.call("PATCH", `/v1/servers/${server.id}`, { headers: { "X-Api-Key": "[SECRET]" } }),
      400,
      "server.invalid",
    );
    expect(await storedHeaders(server.id)).toEqual({});
  });

  it.each([
    ["Authorization", "Bearer [SECRET]"],
    ["X-Api-Key", "[SECRET]"],
    ["X-Note", " [SECRET] "],
  ])("refuses a masked %s on create: a mask is never stored as a value", async (name, value) => {
    const problem = await expectProblem(
      await app.call("POST", "/v1/servers", httpServer("pasted", { headers: { [name]: value } })),
      400,
      "server.invalid",
    );

    expect(problem.errors).toEqual([{ field: `headers.${name}`, message: IS_A_MASK }]);
    expect(await app.store.servers.listPlain()).toEqual([]);
  });
});

describe("env mask rule", () => {
  const ENV = { API_KEY: "k-123", MODE: "x", OLD: "o" };
  const MASKED = { API_KEY: "[SECRET]", MODE: "[SECRET]", OLD: "[SECRET]" };

  async function storedEnv(id: string): Promise<Record<string, string>> {
    const server = await app.store.servers.get(id);
    if (server?.transport !== "stdio") throw new Error(`server ${id} is not a stdio server`);
    return server.env;
  }

  it("masks every env value in create, GET, list, PATCH and reconnect responses", async () => {
    const server = await createServer(app, stdioServer("envy", { env: ENV }));

    const one = await expectJson(await app.call("GET", "/v1/servers/envy"), 200);
    const { servers } = await expectJson<{ servers: Json[] }>(await app.call("GET", "/v1/servers"), 200);
    const patched = await expectJson(await app.call("PATCH", "/v1/servers/envy", { args: ["run"] }), 200);
    const reconnected = await expectJson(await app.call("POST", "/v1/servers/envy/reconnect"), 202);

    for (const view of [server, one, servers[0], patched, reconnected]) expect(view?.env).toEqual(MASKED);
    expect(await storedEnv(server.id)).toEqual(ENV);
  });

  it("per key: an unchanged mask keeps the value, an omitted key is removed, another value replaces", async () => {
    const server = await createServer(app, stdioServer("envy", { env: ENV }));

    const updated = await expectJson(
      await app.call("PATCH", "/v1/servers/envy", { env: { API_KEY: "[SECRET]", MODE: "y", NEW: "n" } }),
      200,
    );

    expect(updated.env).toEqual({ API_KEY: "[SECRET]", MODE: "[SECRET]", NEW: "[SECRET]" });
    expect(await storedEnv(server.id)).toEqual({ API_KEY: "k-123", MODE: "y", NEW: "n" });
    const revealed = await expectJson(await app.call("GET", "/v1/servers/envy?reveal=env"), 200);
    expect(revealed.env).toEqual({ API_KEY: "k-123", MODE: "y", NEW: "n" });
  });

  it("keeps the whole env when a patch does not mention env, and drops it all on `env: {}`", async () => {
    const server = await createServer(app, stdioServer("envy", { env: ENV }));

    await expectJson(await app.call("PATCH", "/v1/servers/envy", { timeoutSeconds: 12 }), 200);
    expect(await storedEnv(server.id)).toEqual(ENV);
    await expectJson(await app.call("PATCH", "/v1/servers/envy", { env: {} }), 200);
    expect(await storedEnv(server.id)).toEqual({});
  });

  it.each([
    ["a key not stored", { ...MASKED, NEW: "[SECRET]" }, "NEW"],
    ["a key in another case", { api_key: "[SECRET]" }, "api_key"],
    ["a scheme'd mask", { API_KEY: "Bearer [SECRET]" }, "API_KEY"],
  ])("refuses a mask for %s with 400 server.invalid naming the key; nothing changes", async (_, env, key) => {
    const server = await createServer(app, stdioServer("envy", { env: ENV }));

    const problem = await expectProblem(
      await app.call("PATCH", "/v1/servers/envy", { env }),
      400,
      "server.invalid",
    );

    expect(problem.errors).toEqual([{ field: `env.${key}`, message: NO_STORED_VALUE }]);
    expect(await storedEnv(server.id)).toEqual(ENV);
    expect(await app.store.servers.get(server.id)).toMatchObject({ version: 1 });
  });

  it("refuses a masked env value on create", async () => {
    const problem = await expectProblem(
      await app.call("POST", "/v1/servers", stdioServer("pasted", { env: { TOKEN: "[SECRET]", OK: "1" } })),
      400,
      "server.invalid",
    );

    expect(problem.errors).toEqual([{ field: "env.TOKEN", message: IS_A_MASK }]);
    expect(await app.store.servers.listPlain()).toEqual([]);
  });
});

describe("secret store routes", () => {
  it("PUT stores a secret sealed and answers with its name and key names only", async () => {
    const response = await app.call("PUT", "/v1/secrets/github", {
      values: { TOKEN: "ghp-value-1", USER: "octo-value-2" },
    });

    const summary = await expectJson(response, 200);
    expect(summary).toEqual({ name: "github", keys: ["TOKEN", "USER"], updatedAt: expect.any(String) });
    expect(await app.store.secrets.get("github")).toEqual({ TOKEN: "ghp-value-1", USER: "octo-value-2" });
  });

  it("GET lists names and key names, never values; PUT again replaces", async () => {
    await app.call("PUT", "/v1/secrets/zeta", { values: { A: "value-a" } });
    await app.call("PUT", "/v1/secrets/alpha", { values: { B: "value-b", A: "value-c" } });
    await app.call("PUT", "/v1/secrets/zeta", { values: { C: "value-d" } });

    const response = await app.call("GET", "/v1/secrets");

    const text = await response.clone().text();
    const body = await expectJson<{ secrets: Json[] }>(response, 200);
    expect(body.secrets).toEqual([
      { name: "alpha", keys: ["A", "B"], updatedAt: expect.any(String) },
      { name: "zeta", keys: ["C"], updatedAt: expect.any(String) },
    ]);
    expect(text).not.toMatch(/value-[a-d]/);
    expect(await app.store.secrets.get("zeta")).toEqual({ C: "value-d" });
  });

  it("lists nothing when there are no secrets", async () => {
    expect(await expectJson(await app.call("GET", "/v1/secrets"), 200)).toEqual({ secrets: [] });
  });

  it("DELETE answers 204, then the secret is gone; deleting a missing one is 404 secret.not_found", async () => {
    await app.call("PUT", "/v1/secrets/old", { values: { K: "v" } });

    const response = await app.call("DELETE", "/v1/secrets/old");

    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(await expectJson(await app.call("GET", "/v1/secrets"), 200)).toEqual({ secrets: [] });
    expect(await app.store.secrets.get("old")).toBeUndefined();
    const problem = await expectProblem(await app.call("DELETE", "/v1/secrets/old"), 404, "secret.not_found");
    expect(problem.detail).toContain("old");
  });

  it.each([
    ["an invalid name", "/v1/secrets/-leading-dash", { values: { K: "v" } }],
    ["a name with a space", "/v1/secrets/two%20words", { values: { K: "v" } }],
    ["no values", "/v1/secrets/ok", {}],
    ["an unknown field", "/v1/secrets/ok", { values: { K: "v" }, ttl: 5 }],
    ["a non-string value", "/v1/secrets/ok", { values: { K: 5 } }],
    ["a nested value", "/v1/secrets/ok", { values: { K: { nested: "v" } } }],
    ["a bad key name", "/v1/secrets/ok", { values: { "bad key": "v" } }],
  ])("PUT rejects %s with 400 and stores nothing", async (_, path, body) => {
    await expectProblem(await app.call("PUT", path, body), 400);

    expect(await app.store.secrets.list()).toEqual([]);
  });

  it("PUT rejects malformed JSON with 400 and a body over 1 MiB with 413", async () => {
    await expectProblem(await app.call("PUT", "/v1/secrets/ok", "{values:"), 400, "request.malformed_json");
    await expectProblem(
      await app.call("PUT", "/v1/secrets/ok", JSON.stringify({ values: { K: "v".repeat(1024 * 1024) } })),
      413,
      "request.too_large",
    );
    expect(await app.store.secrets.list()).toEqual([]);
  });
});

describe("sentinel secrets", () => {
  const S = {
    /** An Authorization header value: never leaves the system. */
    auth: "sntl-auth-5c0f8e21",
    /** A non-Authorization header value: never leaves the system (masked as `[SECRET]`). */
    header: "sntl-hdr-9b47d3a6",
    /** A stdio env value: shown only by `GET /v1/servers/{id}?reveal=env` (the edit form needs it). */
    env: "sntl-env-2e6a1f94",
    /** A secret-store value: never leaves the system. */
    store: "sntl-store-71d5c0b8",
  };
  const ALL = Object.values(S);
  /** Where the contract lets a sentinel appear in a server view: only env, only when revealed. */
  const ALLOWED_PATH: Partial<Record<keyof typeof S, RegExp>> = {
    env: /^env\.TOKEN$/,
  };
  /** The one route whose 2xx body may show a value in the clear: one server, env revealed. */
  const REVEAL_ROUTE = /^GET \/v1\/servers\/[^/?]+\?reveal=env$/;

  interface Exchange {
    route: string;
    status: number;
    body: string;
  }

  it("appear only where the contract allows: an env value when revealed, nothing else, never in logs or raw items", async () => {
    const exchanges: Exchange[] = [];
    const drive = async (
      method: string,
      path: string,
      body?: unknown,
      headers?: Record<string, string>,
    ): Promise<Exchange> => {
      const response = await app.call(method, path, body, headers);
      const exchange = { route: `${method} ${path}`, status: response.status, body: await response.text() };
      exchanges.push(exchange);
      return exchange;
    };
    const sentinelHeaders = { Authorization: `Bearer ${S.auth}`, "X-Api-Key": S.header };
    const webSpec = httpServer("web", { headers: sentinelHeaders });
    const cliSpec = stdioServer("cli", {
      args: ["--token-file", "{{secret_file}}"],
      env: { TOKEN: S.env },
      secretRef: "team",
      secretFormat: "env",
    });
    const importDoc = {
      mcpServers: {
        "imp-web": { type: "http", url: "https://imp.example.com/mcp", headers: sentinelHeaders },
        "imp-cli": { command: "uvx", args: ["tool"], env: { TOKEN: S.env } },
      },
    };

    // Secret store.
    expect(
      (await drive("PUT", "/v1/secrets/team", { values: { API_KEY: S.store, SPARE: S.store } })).status,
    ).toBe(200);
    await drive("GET", "/v1/secrets");
    await drive("PUT", "/v1/secrets/bad name", { values: { API_KEY: S.store } });
    await drive("PUT", "/v1/secrets/team", { values: { API_KEY: S.store }, extra: S.store });
    // Create, and failed creates carrying the sentinels.
    const web = JSON.parse((await drive("POST", "/v1/servers", webSpec)).body) as Json;
    const cli = JSON.parse((await drive("POST", "/v1/servers", cliSpec)).body) as Json;
    expect([web.name, cli.name]).toEqual(["web", "cli"]);
    await drive("POST", "/v1/servers", webSpec);
    await drive("POST", "/v1/servers", { ...webSpec, name: "other", extra: S.auth });
    await drive("POST", "/v1/servers", { ...webSpec, name: "meta", url: "http://169.254.169.254/" });
    await drive("POST", "/v1/servers", { ...cliSpec, name: "cli2", env: { "BAD NAME": S.env } });
    await drive("POST", "/v1/servers", `{"name":"broken","headers":{"Authorization":"Bearer ${S.auth}"`);
    await drive("POST", "/v1/servers", JSON.stringify({ ...webSpec, pad: "x".repeat(1024 * 1024) }));
    // Import: created, conflicting, skipped, replaced, broken.
    await drive("POST", "/v1/servers/import", importDoc);
    await drive("POST", "/v1/servers/import", importDoc);
    await drive("POST", "/v1/servers/import?onConflict=skip", importDoc);
    await drive("POST", "/v1/servers/import?onConflict=replace", importDoc);
    await drive("POST", "/v1/servers/import", {
      mcpServers: { nowhere: { env: { TOKEN: S.env }, headers: sentinelHeaders } },
    });
    // Reads.
    await drive("GET", "/v1/servers");
    await drive("GET", "/v1/servers/web");
    await drive("GET", `/v1/servers/${web.id}`);
    await drive("GET", "/v1/servers/cli");
    await drive("GET", "/v1/servers/imp-web");
    await drive("GET", "/v1/servers/cli?reveal=env");
    await drive("GET", "/v1/servers/web?reveal=env");
    await drive("GET", "/v1/servers/cli?reveal=headers");
    await drive("GET", "/v1/servers?reveal=env");
    // Edits: mask kept, env resubmitted, stale If-Match, bad mask, unknown field.
    await drive("PATCH", "/v1/servers/web", {
      headers: { Authorization: "Bearer [SECRET]", "X-Api-Key": S.header },
      timeoutSeconds: 10,
    });
    await drive("PATCH", "/v1/servers/cli", { env: { TOKEN: S.env, MODE: "fast" } });
    await drive("PATCH", "/v1/servers/cli", { env: { TOKEN: "[SECRET]", MODE: "[SECRET]" } });
    await drive("PATCH", "/v1/servers/cli", { env: { TOKEN: "[SECRET]", GONE: "[SECRET]" } });
    await drive("PATCH", "/v1/servers/web", { url: "https://moved.example.net/mcp" });
    await drive("PATCH", "/v1/servers/web", {
      url: "https://moved.example.net/mcp",
      headers: { Authorization: "Bearer [SECRET]", "X-Api-Key": "[SECRET]" },
    });
    await drive("POST", "/v1/servers", {
      ...webSpec,
      name: "crlf",
      headers: { ...sentinelHeaders, "X-Bad": `${S.header}\r\nX-Injected: 1` },
    });
    await drive("PATCH", "/v1/servers/web", { timeoutSeconds: 11 }, { "if-match": '"1"' });
    await drive("PATCH", "/v1/servers/web", {
      headers: { Authorization: "Basic [SECRET]", "X-Api-Key": S.header },
    });
    await drive("PATCH", "/v1/servers/cli", { env: { TOKEN: S.env }, extra: S.env });
    // Status, tools, reconnect.
    const status = await app.store.statuses.get(web.id as string);
    await app.store.statuses.recordAttempt(
      web.id as string,
      status?.generation ?? 0,
      { ok: true, at: new Date().toISOString(), latencyMs: 3, toolCount: 1 },
      { tools: [{ name: "lookup", description: "Looks things up", inputSchema: { type: "object" } }] },
    );
    await drive("GET", "/v1/servers/web/tools");
    await drive("GET", "/v1/servers/cli/tools");
    await drive("POST", "/v1/servers/web/reconnect");
    await drive("POST", "/v1/servers/cli/reconnect");
    // Unauthenticated attempts carrying sentinels.
    await drive("POST", "/v1/servers", { ...webSpec, name: "anon" }, { authorization: `Bearer ${S.auth}` });
    await drive("GET", "/v1/servers/web", undefined, { authorization: "" });
    // Documents.
    await drive("GET", "/openapi.json");
    await drive("GET", "/docs");
    await drive("GET", "/healthz");

    // Raw storage and the job queue, while everything still exists.
    const raw = JSON.stringify(await scanTable(app.store.config), rawReplacer);
    const jobs = JSON.stringify(await takeJobs(app.store));
    // The env edits with masks kept the real values.
    expect((await app.store.servers.get(cli.id as string)) as Json).toMatchObject({
      env: { TOKEN: S.env, MODE: "fast" },
    });

    // Disable, delete.
    await drive("PATCH", "/v1/servers/web", { enabled: false });
    await drive("DELETE", "/v1/servers/imp-web");
    await drive("DELETE", `/v1/servers/${cli.id}`);
    await drive("DELETE", "/v1/secrets/team");
    await drive("DELETE", "/v1/secrets/team");

    // The server views show masks; only the env reveal shows values (what the edit form needs).
    const body = (route: string, status = 200) =>
      JSON.parse(exchanges.find((e) => e.route === route && e.status === status)?.body ?? "{}") as Json;
    expect(body("GET /v1/servers/web")).toMatchObject({
      headers: { Authorization: "Bearer [SECRET]", "X-Api-Key": "[SECRET]" },
    });
    expect(body("GET /v1/servers/web?reveal=env")).toMatchObject({
      headers: { Authorization: "Bearer [SECRET]", "X-Api-Key": "[SECRET]" },
    });
    expect(body("GET /v1/servers/cli")).toMatchObject({ env: { TOKEN: "[SECRET]" } });
    expect(body("GET /v1/servers/cli?reveal=env")).toMatchObject({ env: { TOKEN: S.env } });
    expect(body("PATCH /v1/servers/cli")).toMatchObject({ env: { TOKEN: "[SECRET]", MODE: "[SECRET]" } });
    const refusedMoves = exchanges.filter((e) =>
      e.body.includes('"code":"server.credentials_origin_changed"'),
    );
    expect(refusedMoves.map((e) => `${e.route} ${e.status}`)).toEqual([
      "PATCH /v1/servers/web 400",
      "PATCH /v1/servers/web 400",
    ]);
    // The header edit with masks kept the real values; the refused moves changed nothing.
    expect((await app.store.servers.get(web.id as string)) as Json).toMatchObject({
      url: "https://web.example.com/mcp",
      headers: { Authorization: `Bearer ${S.auth}`, "X-Api-Key": S.header },
    });
    // Revealing logged key names, never values.
    const reveals = app.logs
      .map((line) => JSON.parse(line) as Json)
      .filter((l) => l.msg === "server env revealed");
    expect(reveals).toEqual([expect.objectContaining({ server: "cli", keys: ["TOKEN"] })]);

    // Responses: each sentinel only at its allowed place, only in a successful env reveal.
    const leaks: string[] = [];
    for (const exchange of exchanges) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(exchange.body);
      } catch {
        for (const value of ALL) if (exchange.body.includes(value)) leaks.push(`${exchange.route}: ${value}`);
        continue;
      }
      for (const [path, value] of leaves(parsed)) {
        for (const [kind, sentinel] of Object.entries(S) as Array<[keyof typeof S, string]>) {
          if (!value.includes(sentinel) && !path.includes(sentinel)) continue;
          const allowed =
            ALLOWED_PATH[kind]?.test(path) === true &&
            value === sentinel &&
            exchange.status < 300 &&
            REVEAL_ROUTE.test(exchange.route);
          if (!allowed) leaks.push(`${exchange.route} (${exchange.status}) ${path}: ${kind}`);
        }
      }
    }
    expect(leaks).toEqual([]);

    // Logs: structured JSON, not one sentinel.
    expect(app.logs.length).toBeGreaterThan(exchanges.length - 1);
    for (const line of app.logs) expect(() => JSON.parse(line)).not.toThrow();
    const logText = app.logs.join("\n");
    for (const value of ALL) expect(logText).not.toContain(value);

    // Raw DynamoDB items and queued jobs: not one sentinel.
    for (const value of ALL) {
      expect(raw).not.toContain(value);
      expect(jobs).not.toContain(value);
    }
  });
});

/** Every string leaf of a JSON value with its dotted path (object keys are checked by the caller too). */
function leaves(value: unknown, path = ""): Array<[string, string]> {
  if (typeof value === "string") return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, index) => leaves(item, join(path, String(index))));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => {
      const child = join(path, key);
      return [...leaves(item, child), ...(key.length > 0 ? [[child, ""] as [string, string]] : [])];
    });
  }
  return [];
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Binary attributes (sealed blobs, gzip) as latin1 text, so a plaintext sentinel inside them is found. */
function rawReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("latin1");
  if (value && typeof value === "object" && (value as { type?: string }).type === "Buffer") {
    return Buffer.from((value as { data: number[] }).data).toString("latin1");
  }
  return value;
}
