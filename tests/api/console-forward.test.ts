/**
 * Deployed, the console lives on the admin function and tool calls on the gateway function: the admin
 * app forwards an admin's catalogue and call requests (console session or token) to the gateway URL.
 */
import { createAdminApp } from "@mcpgw/api";
import { createLogger } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { reaches } from "../support/servers";
import { type Stack, startStack } from "../support/stack";

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
    const { csrfToken } = (await signedIn.json()) as { csrfToken: string };

    const tools = await admin.request("/v1/tools", { headers: { cookie } });
    expect(tools.status).toBe(200);
    expect(((await tools.json()) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain(
      "fwd__echo",
    );
    const call = await admin.request("/v1/tools/fwd__echo/call", {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrfToken, "content-type": "application/json" },
      body: JSON.stringify({ arguments: { text: "through the admin function" } }),
    });
    expect(call.status).toBe(200);
    expect(JSON.stringify(await call.json())).toContain("through the admin function");
    // The gateway audits it as the console's try-it (the forward says so), not as a REST call.
    await stack.audit.flush();
    const audited = await stack.call("GET", "/v1/audit?server=fwd");
    expect(audited.body.events.map((e: { plane: string; tool: string }) => [e.plane, e.tool])).toEqual([
      ["console", "echo"],
    ]);

    const key = await stack.call("POST", "/v1/keys", { name: "client" });
    const refused = await admin.request("/v1/tools", {
      headers: { authorization: `Bearer ${key.body.key}` },
    });
    expect(refused.status).toBe(403);
  });
});
