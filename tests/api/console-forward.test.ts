/**
 * Deployed, the console lives on the admin function and tool calls on the gateway function: the admin
 * app forwards an admin's catalogue and call requests (console session or token) to the gateway URL.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { createAdminApp } from "@mcpgw/api";
import { type AuditEvent, createLogger } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerGatewayForwarding } from "../../packages/api/src/console/forward";
import type { AppEnv } from "../../packages/api/src/env";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { reaches } from "../support/servers";
import { type Stack, startStack } from "../support/stack";

const LOOPBACK = /^(127\.0\.0\.1|::ffff:127\.0\.0\.1|::1)$/;

describe("the admin function forwards the console's tool calls to the gateway", () => {
  let stack: Stack;
  let upstream: Upstream;
  let admin: ReturnType<typeof createAdminApp>;

  beforeAll(async () => {
    upstream = await startUpstream({ name: "fwd" });
    stack = await startStack();
    const created = await stack.call("POST", "/v1/servers", { name: "fwd", url: upstream.url });
    await reaches(stack, created.body.id, "connected");
    admin = createAdminApp({
      store: stack.store,
      logger: createLogger({ level: "error", sink: () => {} }),
      adminToken: TEST_ADMIN_TOKEN,
      allowPrivateUpstreams: true,
      gatewayUrl: stack.api.url,
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("lists and calls tools for a console session; a client key is refused", async () => {
    const signedIn = await admin.request("/console/session", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
    });
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const { csrfToken, gatewayUrl } = (await signedIn.json()) as { csrfToken: string; gatewayUrl: string };
    // The console's "connect a client" configs name the gateway function, not the admin one.
    expect(gatewayUrl).toBe(stack.api.url);

    // A server's browse lists are the gateway's too.
    const prompts = await admin.request("/v1/prompts?server=fwd", { headers: { cookie } });
    expect(prompts.status).toBe(200);
    expect(await prompts.json()).toMatchObject({ server: "fwd", prompts: expect.any(Array) });

    const tools = await admin.request("/v1/tools", { headers: { cookie } });
    expect(tools.status).toBe(200);
    expect(((await tools.json()) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain(
      "fwd__echo",
    );
    // The browser's address, as the admin function's Node server sees its socket.
    const browser = { incoming: { socket: { remoteAddress: "203.0.113.7" } } };
    const call = await admin.request(
      "/v1/tools/fwd__echo/call",
      {
        method: "POST",
        headers: { cookie, "x-csrf-token": csrfToken, "content-type": "application/json" },
        body: JSON.stringify({ arguments: { text: "through the admin function" } }),
      },
      browser,
    );
    expect(call.status).toBe(200);
    expect(JSON.stringify(await call.json())).toContain("through the admin function");
    // The gateway audits it as the console's try-it (the forward says so), not as a REST call, from the
    // browser's address, not the admin function's.
    await stack.audit.flush();
    const audited = await stack.call("GET", "/v1/audit?server=fwd&tool=echo");
    expect(audited.body.events.map((e: AuditEvent) => [e.plane, e.tool, e.principal, e.source])).toEqual([
      ["console", "echo", { kind: "admin" }, "203.0.113.7"],
    ]);

    const key = await stack.call("POST", "/v1/keys", { name: "client" });
    const refused = await admin.request("/v1/tools", {
      headers: { authorization: `Bearer ${key.body.key}` },
    });
    expect(refused.status).toBe(403);
  });

  it("names the console session's provider subject; a key sending the forward's headers changes nothing", async () => {
    // The admin function's forwarding for an admin signed in at the provider (as authenticate sets it).
    const signedIn = new OpenAPIHono<AppEnv>();
    signedIn.use(async (c, next) => {
      c.set("principal", { kind: "admin", via: "console", sub: "root-1" });
      await next();
    });
    registerGatewayForwarding(signedIn, { gatewayUrl: stack.api.url, adminToken: TEST_ADMIN_TOKEN });
    const call = await signedIn.request("/v1/tools/fwd__echo/call", {
      method: "POST",
      body: JSON.stringify({ arguments: { text: "by root-1" } }),
    });
    expect(call.status).toBe(200);

    const key = await stack.call("POST", "/v1/keys", { name: "pretender" });
    const spoofed = await fetch(`${stack.api.url}/v1/tools/fwd__echo/call`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key.body.key}`,
        "content-type": "application/json",
        "x-mcpgw-console": "1",
        "x-mcpgw-console-sub": "root-1",
        "x-mcpgw-console-source": "198.51.100.1",
      },
      body: JSON.stringify({ arguments: { text: "not the console" } }),
    });
    expect(spoofed.status).toBe(200);

    await stack.audit.flush();
    const of = async (principal: string) =>
      ((await stack.call("GET", `/v1/audit?principal=${principal}`)).body.events as AuditEvent[]).map((e) => [
        e.plane,
        e.principal,
        e.source,
      ]);
    expect(await of("root-1")).toEqual([["console", { kind: "admin", sub: "root-1" }, expect.any(String)]]);
    expect(await of(key.body.id)).toEqual([
      ["rest", { kind: "key", keyId: key.body.id, keyName: "pretender" }, expect.stringMatching(LOOPBACK)],
    ]);
  });
});
