/**
 * The OpenAPI document: 3.1, structurally valid (no validator is installed, so the rules of the spec
 * that matter are checked here), and covering every route the app serves.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, freshApp, type Json, type TestApp } from "./helpers";

/** The admin routes of the contract (issue "Admin API"), as OpenAPI path templates. */
const CONTRACT_ROUTES = [
  "get /v1/servers",
  "post /v1/servers",
  "post /v1/servers/import",
  "get /v1/servers/{id}",
  "patch /v1/servers/{id}",
  "delete /v1/servers/{id}",
  "post /v1/servers/{id}/reconnect",
  "get /v1/servers/{id}/tools",
  "get /v1/secrets",
  "put /v1/secrets/{name}",
  "delete /v1/secrets/{name}",
];
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const SCHEMA_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];

type Operation = Json & {
  responses: Record<string, Json>;
  parameters?: Array<Json & { name: string; in: string }>;
  requestBody?: Json & { content: Record<string, Json> };
  security?: Array<Record<string, string[]>>;
};

let app: TestApp;
let doc: Json & { paths: Record<string, Record<string, Operation>>; components: Json };

beforeAll(async () => {
  app = await freshApp();
  doc = await expectJson(await app.app.request("/openapi.json"), 200);
});

function operations(): Array<[string, string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]): [string, string, Operation] => [method, path, operation]),
  );
}

function operation(route: string): Operation {
  const [method = "", path = ""] = route.split(" ");
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`${route} is not documented`);
  return found;
}

/** Resolves a local JSON pointer (`#/components/schemas/Server`). */
function resolvePointer(ref: string): unknown {
  expect(ref.startsWith("#/"), `${ref} is not a local reference`).toBe(true);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Every object in the document with its JSON path. */
function walk(node: unknown, path = "#", out: Array<[string, Json]> = []): Array<[string, Json]> {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) walk(item, `${path}/${index}`, out);
  } else if (node && typeof node === "object") {
    out.push([path, node as Json]);
    for (const [key, value] of Object.entries(node)) walk(value, `${path}/${key}`, out);
  }
  return out;
}

/** A schema with `$ref`s followed. */
function deref(schema: Json): Json {
  return typeof schema.$ref === "string" ? deref(resolvePointer(schema.$ref) as Json) : schema;
}

describe("GET /openapi.json", () => {
  it("is served without auth as JSON, OpenAPI 3.1 with info", async () => {
    const response = await app.app.request("/openapi.json");

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc).not.toHaveProperty("swagger");
  });

  it("documents every route of the contract", () => {
    const documented = operations().map(([method, path]) => `${method} ${path}`);

    expect(documented).toEqual(expect.arrayContaining(CONTRACT_ROUTES));
  });

  it("documents every /v1 and console-session(s)/sign-in route and probe the app serves, and nothing it does not serve", () => {
    const probes = ["/healthz", "/readyz", "/console/session", "/console/sessions", "/console/sign-in"];
    const served = new Set(
      app.app.routes
        .filter(
          (route) => route.method !== "ALL" && (route.path.startsWith("/v1/") || probes.includes(route.path)),
        )
        .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`),
    );
    const documented = new Set(operations().map(([method, path]) => `${method} ${path}`));

    expect([...served].filter((route) => !documented.has(route))).toEqual([]);
    expect([...documented].filter((route) => !served.has(route))).toEqual([]);
  });

  it("gives every operation a summary, unique operation ids where present, and tags", () => {
    const ids: string[] = [];
    for (const [method, path, op] of operations()) {
      expect(op.summary, `${method} ${path}`).toEqual(expect.stringMatching(/\S/));
      expect(Array.isArray(op.tags) && op.tags.length > 0, `${method} ${path} tags`).toBe(true);
      if (op.operationId !== undefined) ids.push(op.operationId as string);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("gives every operation responses with valid status keys, descriptions and typed content", () => {
    for (const [method, path, op] of operations()) {
      const statuses = Object.keys(op.responses ?? {});
      expect(statuses.length, `${method} ${path}`).toBeGreaterThan(0);
      expect(
        statuses.some((status) => /^2/.test(status)),
        `${method} ${path} has a success`,
      ).toBe(true);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status, `${method} ${path}`).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
        const resolved = deref(response);
        expect(resolved.description, `${method} ${path} ${status}`).toEqual(expect.any(String));
        for (const [mediaType, media] of Object.entries((resolved.content ?? {}) as Record<string, Json>)) {
          expect(mediaType).toMatch(/^[a-z]+\/[a-z0-9.+-]+$/);
          expect(media.schema, `${method} ${path} ${status} ${mediaType}`).toEqual(expect.any(Object));
        }
        if (/^[45]/.test(status)) {
          expect(Object.keys((resolved.content ?? {}) as Json), `${method} ${path} ${status}`).toEqual([
            "application/problem+json",
          ]);
        }
      }
    }
  });

  it("documents the problems the contract names on each admin route", () => {
    const expected: Record<string, string[]> = {
      "get /v1/servers": ["200", "400", "401"],
      "post /v1/servers": ["201", "400", "401", "409", "413", "415"],
      "post /v1/servers/import": ["200", "201", "400", "401", "409", "413", "415"],
      "get /v1/servers/{id}": ["200", "401", "404"],
      "patch /v1/servers/{id}": ["200", "400", "401", "404", "409", "412", "413", "415"],
      "delete /v1/servers/{id}": ["204", "401", "404"],
      "post /v1/servers/{id}/reconnect": ["202", "401", "404", "409"],
      "post /v1/servers/{id}/authorize": ["200", "400", "401", "404", "409", "502"],
      "get /v1/servers/{id}/tools": ["200", "401", "404"],
      "get /v1/servers/{id}/latency": ["200", "401", "404"],
      "get /v1/secrets": ["200", "401"],
      "put /v1/secrets/{name}": ["200", "400", "401", "413", "415"],
      "delete /v1/secrets/{name}": ["204", "401", "404"],
    };
    for (const [route, statuses] of Object.entries(expected)) {
      expect(Object.keys(operation(route).responses), route).toEqual(expect.arrayContaining(statuses));
    }
  });

  it("documents the problems every operation can answer: 401; 400 where it reads input; 403 on admin-only paths; 413 where a body may come; 415 where one is taken", () => {
    for (const [method, path, op] of operations()) {
      if (!path.startsWith("/v1/")) continue;
      const statuses = Object.keys(op.responses);
      const expected = ["401"];
      if (op.parameters?.length || op.requestBody) expected.push("400");
      if (/^\/v1\/(servers|secrets|keys)(\/|$)/.test(path)) expected.push("403");
      if (method !== "get") expected.push("413");
      if (op.requestBody) expected.push("415");
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(expected));
    }
  });

  it("documents no 500 on any operation: a 500 is a bug, never part of the contract", () => {
    const documented = operations()
      .filter(([, , op]) => Object.keys(op.responses).some((status) => /^5(00|XX)$/i.test(status)))
      .map(([method, path]) => `${method} ${path}`);
    expect(documented).toEqual([]);
  });

  it("declares every path parameter, required, exactly once; parameters are well formed", () => {
    for (const [method, path, op] of operations()) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const parameters = [
        ...((doc.paths[path]?.parameters as Operation["parameters"]) ?? []),
        ...(op.parameters ?? []),
      ].map((parameter) => deref(parameter) as Json & { name: string; in: string });
      const inPath = parameters.filter((parameter) => parameter.in === "path");
      expect(inPath.map((parameter) => parameter.name).sort(), `${method} ${path}`).toEqual(
        [...templated].sort(),
      );
      for (const parameter of inPath)
        expect(parameter.required, `${method} ${path} ${parameter.name}`).toBe(true);
      const keys = parameters.map((parameter) => `${parameter.in}:${parameter.name}`);
      expect(new Set(keys).size, `${method} ${path}`).toBe(keys.length);
      for (const parameter of parameters) {
        expect(["query", "header", "path", "cookie"]).toContain(parameter.in);
        expect(parameter.name).toEqual(expect.stringMatching(/\S/));
        expect(parameter.schema ?? parameter.content, `${method} ${path} ${parameter.name}`).toBeDefined();
      }
    }
  });

  it("documents a JSON request body where the admin API reads one", () => {
    for (const route of [
      "post /v1/servers",
      "post /v1/servers/import",
      "patch /v1/servers/{id}",
      "put /v1/secrets/{name}",
    ]) {
      const body = operation(route).requestBody;
      expect(body?.content?.["application/json"]?.schema, route).toEqual(expect.any(Object));
    }
    expect(operation("patch /v1/servers/{id}").parameters).toContainEqual(
      expect.objectContaining({ name: "if-match", in: "header" }),
    );
    expect(operation("post /v1/servers/import").parameters).toContainEqual(
      expect.objectContaining({ name: "onConflict", in: "query" }),
    );
    expect(operation("post /v1/servers/import").parameters).toContainEqual(
      expect.objectContaining({ name: "dryRun", in: "query" }),
    );
  });

  it("requires a defined bearer security scheme on every /v1 operation", () => {
    const schemes = (doc.components.securitySchemes ?? {}) as Record<string, Json>;
    for (const [name, scheme] of Object.entries(schemes)) {
      expect(["apiKey", "http", "mutualTLS", "oauth2", "openIdConnect"], name).toContain(scheme.type);
    }
    for (const [method, path, op] of operations()) {
      if (!path.startsWith("/v1/")) continue;
      const security = op.security ?? (doc.security as Operation["security"]);
      expect(security?.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const requirement of security ?? []) {
        for (const name of Object.keys(requirement)) {
          expect(schemes[name], `${method} ${path} security ${name}`).toMatchObject({
            type: "http",
            scheme: "bearer",
          });
        }
      }
    }
  });

  it("resolves every $ref inside the document", () => {
    const refs = walk(doc)
      .filter(([, node]) => typeof node.$ref === "string")
      .map(([path, node]) => [path, node.$ref as string] as const);

    expect(refs.length).toBeGreaterThan(0);
    const dangling = refs.filter(([, ref]) => !ref.startsWith("#/") || resolvePointer(ref) === undefined);
    expect(dangling).toEqual([]);
  });

  it("uses JSON Schema 2020-12 forms in its schemas (no OpenAPI 3.0 `nullable`, valid types)", () => {
    const schemaNodes = walk(doc.components.schemas, "#/components/schemas");
    for (const [path, node] of schemaNodes) {
      if (path.endsWith("/properties") || path.includes("/example")) continue;
      expect(node, path).not.toHaveProperty("nullable");
      if ("type" in node) {
        const types = Array.isArray(node.type) ? node.type : [node.type];
        for (const type of types) expect(SCHEMA_TYPES, `${path} type`).toContain(type);
      }
      if (Array.isArray(node.required) && node.properties && typeof node.properties === "object") {
        for (const name of node.required as string[])
          expect(node.properties, `${path} required`).toHaveProperty(name);
      }
    }
  });

  it("describes the Server shape of the contract, its status, and the problem shape", () => {
    const server = deref({ $ref: "#/components/schemas/Server" });
    expect(Object.keys(server.properties as Json)).toEqual(
      expect.arrayContaining([
        "id",
        "name",
        "transport",
        "enabled",
        "url",
        "headers",
        "command",
        "args",
        "env",
        "timeoutSeconds",
        "scope",
        "secretRef",
        "secretFormat",
        "version",
        "createdAt",
        "updatedAt",
        "status",
      ]),
    );
    const status = deref((server.properties as Record<string, Json>).status as Json);
    expect(Object.keys(status.properties as Json).sort()).toEqual(
      [
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
        "protocolVersion",
        "eras",
        "authorization",
        "credentialExpiresAt",
        "pendingChanges",
      ].sort(),
    );
    expect(status.required).toContain("pendingChanges"); // 0 when none
    expect(server.required).toContain("pinning"); // the effective value
    expect(Object.keys(server.properties as Json)).toContain("pinning");
    expect(status.required).not.toContain("protocolVersion");
    expect(status.required).not.toContain("eras"); // absent until a listing
    expect(status.required).toContain("nextAttemptAt"); // an ISO time or null, always there
    // Only servers with `auth` show their credential's state.
    expect(status.required).not.toContain("authorization");
    expect(status.required).not.toContain("credentialExpiresAt");
    expect(deref(status.properties as Json).authorization).toMatchObject({
      enum: ["required", "authorized", "refused"],
    });
    // `auth`: an OAuth client of a user (authorize step), or a machine client (client_credentials).
    const auth = deref((server.properties as Record<string, Json>).auth as Json);
    const variants = ((auth.oneOf ?? auth.anyOf) as Json[]).map((variant) => deref(variant));
    expect(variants.map((variant) => Object.keys(variant.properties as Json))).toEqual([
      ["type", "mode", "clientId", "clientSecret", "scopes"],
      ["type", "clientId", "clientSecret", "scopes", "tokenUrl"],
    ]);
    for (const variant of variants) {
      const secret = (variant.properties as Record<string, Json>).clientSecret as Json;
      expect(secret.description).toContain("[SECRET]");
    }
    expect(variants[1]?.required).toEqual(["type", "clientId", "clientSecret"]);
    const problem = deref({ $ref: "#/components/schemas/Problem" });
    expect(problem.required).toEqual(expect.arrayContaining(["type", "title", "status", "detail", "code"]));
    const created = operation("post /v1/servers").responses["201"] as Json;
    expect(deref((created.content as Record<string, Json>)["application/json"]?.schema as Json)).toBe(server);
  });

  it("documents the server list's pages: `limit` (1–1000, default 100), `cursor`, and `nextCursor`", () => {
    const list = operation("get /v1/servers");
    const parameters = (list.parameters ?? []).map(
      (parameter) => deref(parameter) as Json & { schema: Json },
    );
    expect(
      parameters.map((parameter) => [parameter.in, parameter.name, parameter.required ?? false]),
    ).toEqual([
      ["query", "limit", false],
      ["query", "cursor", false],
    ]);
    expect(parameters[0]?.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    const ok = list.responses["200"] as Json;
    const body = deref((ok.content as Record<string, Json>)["application/json"]?.schema as Json);
    expect(Object.keys(body.properties as Json)).toEqual(["servers", "nextCursor"]);
    expect(body.required).toEqual(["servers"]);
  });
});

describe("GET /docs", () => {
  it("serves the Swagger UI page, without auth, pointing at the document", async () => {
    const response = await app.app.request("/docs");

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toMatch(/<html/i);
    expect(html).toMatch(/swagger/i);
    expect(html).toContain("/openapi.json");
  });
});

describe("GET /healthz", () => {
  it("answers 200 without auth", async () => {
    const response = await app.app.request("/healthz");

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});

describe("GET /readyz", () => {
  /** The schema of one response of an operation, `$ref`s followed. */
  const responseSchema = (op: Operation, status: string, type: string) => {
    const response = op.responses[status] as Json;
    return deref((response.content as Record<string, Json>)[type]?.schema as Json);
  };

  it("is documented without auth: 200 with every check, 503 problem+json naming the checks", () => {
    const readyz = operation("get /readyz");
    const healthz = operation("get /healthz");

    expect(readyz.security ?? doc.security).toBeUndefined();
    expect(healthz.security ?? doc.security).toBeUndefined();
    const ok = responseSchema(readyz, "200", "application/json");
    expect(ok.required).toEqual(expect.arrayContaining(["ok", "degraded", "checks"]));
    const checks = deref((ok.properties as Record<string, Json>).checks as Json);
    expect(Object.keys(checks.properties as Json)).toEqual(["table", "queue", "key", "runner", "audit"]);
    // The Problem shape with `checks` added (allOf: Problem, { checks }).
    const notReady = responseSchema(readyz, "503", "application/problem+json");
    const parts = ((notReady.allOf as Json[] | undefined) ?? [notReady]).map(deref);
    expect(parts.flatMap((part) => (part.required as string[] | undefined) ?? [])).toEqual(
      expect.arrayContaining(["type", "title", "status", "detail", "code", "checks"]),
    );
  });
});
