/**
 * Admin changes in the audit trail, from outside: each change through the admin API is one `change`
 * event read back through `GET /v1/audit`, naming the fields it changed and never a value; a failed
 * change records the code it failed with.
 */
import type { AuditEvent } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type OidcProvider, startOidcProvider } from "../fixtures/oidc-provider";
import { createConnected, type Stack, startGatewayStack } from "../gateway/helpers";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { CookieBrowser } from "../support/cookie-browser";
import { createServer, uniqueName } from "../support/servers";
import { startStack, waitFor } from "../support/stack";

const SENTINEL = `sentinel-${Math.random().toString(36).slice(2, 10)}`;

describe("admin changes in the audit trail", () => {
  let stack: Stack;
  let upstream: Upstream;
  const since = new Date().toISOString();

  /** The change events since the suite began (optionally narrowed by `query`), oldest first. */
  async function changes(query = ""): Promise<AuditEvent[]> {
    await stack.audit.flush();
    const { status, body } = await stack.call("GET", `/v1/audit?since=${since}&limit=500${query}`);
    expect(status).toBe(200);
    return (body.events as AuditEvent[]).filter((event) => event.type === "change").reverse();
  }

  /** The change events on one resource. */
  async function on(type: string, id: string): Promise<AuditEvent[]> {
    return (await changes()).filter((event) => event.resource?.type === type && event.resource.id === id);
  }

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstream = await startUpstream({ name: "audited" });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("an edit of a server's timeout and one header secret records exactly those names, and no value", async () => {
    const name = uniqueName("edited");
    const id = await createServer(stack, {
      name,
      url: upstream.url,
      headers: { "X-Api-Key": `first-${SENTINEL}`, "X-Team": `team-${SENTINEL}` },
    });
    const patch = {
      timeoutSeconds: 45,
      headers: { "X-Api-Key": `second-${SENTINEL}`, "X-Team": "[SECRET]" },
    };
    expect((await stack.call("PATCH", `/v1/servers/${id}`, patch)).status).toBe(200);

    const events = await changes(`&server=${name}`);
    expect(events.map((event) => event.action)).toEqual(["server.create", "server.update"]);
    const [, update] = events;
    expect(update?.fields).toEqual(["headers.X-Api-Key", "timeoutSeconds"]);
    expect(update?.resource).toEqual({ type: "server", id, name });
    expect([update?.plane, update?.principal, update?.outcome]).toEqual(["admin", { kind: "admin" }, "ok"]);
    expect(update?.durationMs).toBeGreaterThan(0);
    expect(update?.source).toMatch(/127\.0\.0\.1|::1/);

    // The sentinel is in no event, listed or exported.
    expect(JSON.stringify(await changes())).not.toContain(SENTINEL);
    await stack.audit.flush();
    const exported = await fetch(`${stack.api.url}/v1/audit/export?since=${since}`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(exported.status).toBe(200);
    const lines = await exported.text();
    expect(lines).toContain(id);
    expect(lines).not.toContain(SENTINEL);
  });

  it("key create and delete, an access put and a tool set create each record one event", async () => {
    const created = await stack.call("POST", "/v1/keys", { name: "audited-key" });
    expect(created.status).toBe(201);
    const keyId = created.body.id as string;
    expect((await stack.call("DELETE", `/v1/keys/${keyId}`)).status).toBe(204);
    expect((await stack.call("PUT", "/v1/access/user:audited", { servers: null })).status).toBe(200);
    const set = uniqueName("audited-set");
    expect((await stack.call("POST", "/v1/toolsets", { name: set })).status).toBe(201);

    expect(
      (await on("key", keyId)).map(({ action, fields, outcome }) => ({ action, fields, outcome })),
    ).toEqual([
      { action: "key.create", fields: ["name"], outcome: "ok" },
      { action: "key.delete", fields: undefined, outcome: "ok" },
    ]);
    expect((await on("key", keyId))[0]?.resource).toEqual({ type: "key", id: keyId, name: "audited-key" });
    const access = await on("access", "user:audited");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ action: "access.put", fields: ["serverIds"], outcome: "ok" });
    const toolset = await on("toolset", set);
    expect(toolset).toHaveLength(1);
    expect(toolset[0]).toMatchObject({ action: "toolset.create", outcome: "ok" });
    expect(toolset[0]?.fields).toContain("name");
  });

  it("a pin approval records one event on the change, filed under its server", {
    timeout: 60_000,
  }, async () => {
    const pinned = await startUpstream({ name: "pinned" });
    try {
      const name = uniqueName("pinned");
      const id = await createConnected(stack, { name, url: pinned.url });
      pinned.setToolDescription("echo", "Echo the given text, now differently");
      expect((await stack.call("POST", `/v1/servers/${id}/reconnect`)).status).toBe(202);
      const [change] = await waitFor(
        async () =>
          (await stack.call("GET", `/v1/servers/${id}/changes`)).body.changes as Array<{ id: string }>,
        (pending) => pending.length === 1,
        { timeoutMs: 15_000 },
      );
      const approved = await stack.call("POST", `/v1/servers/${id}/changes/${change?.id}/approve`);
      expect(approved.status).toBe(200);

      const events = await changes(`&server=${id}`);
      expect(events.map((event) => event.action)).toEqual([
        "server.create",
        "server.reconnect",
        "change.approve",
      ]);
      expect(events[2]).toMatchObject({
        outcome: "ok",
        serverId: id,
        serverName: name,
        resource: { type: "change", id: change?.id, name: "echo" },
      });
    } finally {
      await pinned.close();
    }
  });

  it("a failed change records the error code it failed with", async () => {
    expect((await stack.call("PATCH", "/v1/servers/no-such-server", { timeoutSeconds: 5 })).status).toBe(404);
    expect((await stack.call("POST", "/v1/keys", { name: "" })).status).toBe(400);
    expect((await stack.call("DELETE", "/v1/access/user:nobody-here")).status).toBe(404);

    expect(await on("server", "no-such-server")).toEqual([
      expect.objectContaining({ action: "server.update", outcome: "server.not_found" }),
    ]);
    const refusedKey = (await changes()).filter(
      (event) => event.action === "key.create" && event.outcome !== "ok",
    );
    expect(refusedKey).toEqual([expect.objectContaining({ outcome: "request.invalid" })]);
    expect(await on("access", "user:nobody-here")).toEqual([
      expect.objectContaining({ action: "access.delete", outcome: "request.not_found" }),
    ]);
  });
});

describe("a change through a console session signed in at the provider", () => {
  let op: OidcProvider;
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    op = await startOidcProvider({ accounts: [{ sub: "root-1", groups: ["gw-admins"] }] });
    stack = await startStack({ oidc: { ...op.settings, admins: { group: "gw-admins", users: [] } } });
    op.register([`${stack.api.url}/console/oidc/callback`]);
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await op?.close();
  });

  it("is on the console plane and names the admin by their subject", async () => {
    op.signInAs("root-1");
    const browser = new CookieBrowser();
    await browser.follow(`${stack.api.url}/console/oidc/start`, () => false);
    const { csrfToken } = (await (await browser.fetch(`${stack.api.url}/console/session`)).json()) as {
      csrfToken: string;
    };
    const created = await browser.fetch(`${stack.api.url}/v1/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrfToken },
      body: JSON.stringify({ name: "from-the-console" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    await stack.audit.flush();
    const { body } = await stack.call("GET", "/v1/audit?principal=root-1");
    expect(body.events).toEqual([
      expect.objectContaining({
        action: "key.create",
        plane: "console",
        principal: { kind: "admin", sub: "root-1" },
        resource: { type: "key", id, name: "from-the-console" },
      }),
    ]);
  });
});
