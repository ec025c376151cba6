import { createMemoryStore } from "@mcpgw/aws/memory";
import { type AuditEvent, createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createApp } from "../app";
import { boundedFields, MAX_EVENT_FIELDS, routeAction } from "./change-audit";

const ADMIN_TOKEN = "unit-admin-token-4c1e";
const SENTINEL = "sentinel-value-9d27f0";

/** The whole app over a memory store, its audit events kept in `events`. */
function appOver() {
  const events: AuditEvent[] = [];
  const app = createApp({
    store: createMemoryStore(),
    logger: createLogger({ level: "error", sink: () => {} }),
    adminToken: ADMIN_TOKEN,
    allowPrivateUpstreams: false,
    audit: { record: (event) => events.push(event) },
  });
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    app.request(path, {
      method,
      headers: {
        ...(headers.cookie ? {} : { authorization: `Bearer ${ADMIN_TOKEN}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return { events, request };
}

const SERVER = {
  name: "docs",
  transport: "http",
  url: "https://docs.example.com/mcp",
  headers: { "X-Api-Key": `key-${SENTINEL}`, "X-Team": `team-${SENTINEL}` },
};

describe("admin changes in the audit trail", () => {
  it("an edit records the names of the fields whose values changed, and no value", async () => {
    const { events, request } = appOver();
    const created = await request("POST", "/v1/servers", SERVER);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const patch = { timeoutSeconds: 45, headers: { "X-Api-Key": `new-${SENTINEL}`, "X-Team": "[SECRET]" } };
    expect((await request("PATCH", `/v1/servers/${id}`, patch)).status).toBe(200);
    // The same timeout again changes nothing.
    expect((await request("PATCH", `/v1/servers/${id}`, { timeoutSeconds: 45 })).status).toBe(200);

    expect(events.map((event) => event.action)).toEqual(["server.create", "server.update", "server.update"]);
    const [create, update, same] = events;
    expect(create).toMatchObject({
      type: "change",
      plane: "admin",
      principal: { kind: "admin" },
      outcome: "ok",
      serverId: id,
      serverName: "docs",
      resource: { type: "server", id, name: "docs" },
      // A new server's every field is set: those the request sent and the defaults it took.
      fields: [
        "enabled",
        "headers.X-Api-Key",
        "headers.X-Team",
        "name",
        "timeoutSeconds",
        "transport",
        "url",
      ],
    });
    expect(update?.fields).toEqual(["headers.X-Api-Key", "timeoutSeconds"]);
    expect(same?.fields).toEqual([]);
    for (const event of events) {
      expect(event.id).toMatch(/^[0-9a-f]{28}$/);
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(JSON.stringify(events)).not.toContain(SENTINEL);
  });

  it("a failed change records the code it failed with; reads record nothing", async () => {
    const { events, request } = appOver();
    expect((await request("PATCH", "/v1/servers/missing", { timeoutSeconds: 5 })).status).toBe(404);
    expect((await request("POST", "/v1/servers", { name: "bad name!" })).status).toBe(400);
    expect((await request("GET", "/v1/servers")).status).toBe(200);
    expect((await request("GET", "/v1/keys")).status).toBe(200);

    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      action: "server.update",
      outcome: "server.not_found",
      resource: { type: "server", id: "missing" },
    });
    expect(events[0]?.fields).toBeUndefined();
    expect(events[1]).toMatchObject({ action: "server.create", outcome: "request.invalid" });
    expect(events[1]?.resource).toBeUndefined();
  });

  it("keys, access, tool sets and secrets each record one event per change", async () => {
    const { events, request } = appOver();
    const key = await request("POST", "/v1/keys", { name: "laptop", rateLimit: { perMinute: 5 } });
    const { id: keyId } = (await key.json()) as { id: string };
    expect((await request("DELETE", `/v1/keys/${keyId}`)).status).toBe(204);
    expect((await request("PUT", "/v1/access/user:ada", { servers: null })).status).toBe(200);
    expect((await request("PUT", "/v1/access/user:ada", { servers: [] })).status).toBe(200);
    expect((await request("DELETE", "/v1/access/user:ada")).status).toBe(204);
    expect((await request("POST", "/v1/toolsets", { name: "reading", description: "d" })).status).toBe(201);
    expect((await request("PUT", "/v1/toolsets/reading", { description: "e" })).status).toBe(200);
    expect((await request("DELETE", "/v1/toolsets/reading")).status).toBe(204);
    expect(
      (await request("PUT", "/v1/secrets/db", { values: { user: SENTINEL, pass: SENTINEL } })).status,
    ).toBe(200);
    expect((await request("PUT", "/v1/secrets/db", { values: { user: SENTINEL } })).status).toBe(200);

    // Each event as `action type:id[:name] fields outcome`.
    const line = ({ action, resource, fields, outcome }: AuditEvent) =>
      [
        action,
        [resource?.type, resource?.id, resource?.name].filter(Boolean).join(":"),
        fields?.join(","),
        outcome,
      ]
        .filter((part) => part !== undefined)
        .join(" ");
    expect(events.map(line)).toEqual([
      `key.create key:${keyId}:laptop name,rateLimit.perMinute ok`,
      `key.delete key:${keyId} ok`,
      "access.put access:user:ada serverIds ok",
      "access.put access:user:ada serverIds ok",
      "access.delete access:user:ada ok",
      "toolset.create toolset:reading:reading description,name,rules,tools ok",
      "toolset.update toolset:reading:reading description ok",
      "toolset.delete toolset:reading ok",
      "secret.put secret:db:db values.pass,values.user ok",
      "secret.put secret:db:db values.pass,values.user ok",
    ]);
    expect(JSON.stringify(events)).not.toContain(SENTINEL);
  });

  it("an import records one event per server it creates; a dry run none", async () => {
    const { events, request } = appOver();
    const document = {
      mcpServers: {
        one: { url: "https://one.example.com/mcp" },
        two: { command: "node", args: ["server.js"], env: { TOKEN: SENTINEL } },
      },
    };
    expect((await request("POST", "/v1/servers/import?dryRun=true", document)).status).toBe(200);
    expect(events).toEqual([]);
    expect((await request("POST", "/v1/servers/import", document)).status).toBe(201);

    expect(events.map((event) => [event.action, event.resource?.name])).toEqual([
      ["server.create", "one"],
      ["server.create", "two"],
    ]);
    expect(events[1]?.fields).toContain("env.TOKEN");
    expect(JSON.stringify(events)).not.toContain(SENTINEL);
  });

  it("a change through the console's session is on the console plane", async () => {
    const { events, request } = appOver();
    const signIn = await request("POST", "/console/session", { token: ADMIN_TOKEN });
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const headers = { cookie, "x-csrf-token": csrfToken };
    expect((await request("POST", "/v1/keys", { name: "from-console" }, headers)).status).toBe(201);

    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ action: "key.create", plane: "console", principal: { kind: "admin" } });
  });
});

describe("boundedFields", () => {
  it("keeps a list within the bound, and says how many it left out past it", () => {
    const names = (count: number) => Array.from({ length: count }, (_, at) => `headers.H${at}`);
    expect(boundedFields(names(MAX_EVENT_FIELDS))).toEqual(names(MAX_EVENT_FIELDS));
    expect(boundedFields(names(MAX_EVENT_FIELDS + 250))).toEqual([...names(MAX_EVENT_FIELDS), "+250 more"]);
  });
});

describe("routeAction", () => {
  it("names listed routes as listed, and any other by its collection and method", () => {
    expect(routeAction("PATCH", "/v1/servers/:id")).toEqual({
      action: "server.update",
      type: "server",
      param: "id",
    });
    expect(routeAction("POST", "/v1/servers/:id/changes/:changeId/approve").action).toBe("change.approve");
    expect(routeAction("POST", "/v1/widgets")).toEqual({ action: "widget.create", type: "widget" });
    expect(routeAction("DELETE", "/v1/widgets/:name")).toEqual({
      action: "widget.delete",
      type: "widget",
      param: "name",
    });
  });
});
