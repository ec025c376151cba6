/**
 * Authorization by route group: walking every operation of the OpenAPI document with a client API
 * key, each admin operation (tags servers, secrets, keys — the admin route group) refuses it with 403
 * `auth.forbidden` before doing anything, and every client (data-plane) operation lets it through; the
 * admin token passes everywhere. A route added to the admin group is guarded without naming its path.
 */
import { describe, expect, it } from "vitest";
import { createTestApp, TEST_ADMIN_TOKEN } from "../support/app";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked, not typed
type Json = any;

const ADMIN_TAGS = new Set(["servers", "secrets", "keys", "access", "toolsets", "audit"]);

describe("route groups", () => {
  it("every admin operation refuses a client key (403); every client operation lets it through", async () => {
    // Prepare: a server to address, a client key, and the document
    const { app, call } = await createTestApp();
    const created = (await (
      await call("POST", "/v1/servers", { name: "walked", url: "http://127.0.0.1:9/mcp" })
    ).json()) as Json;
    const key = ((await (await call("POST", "/v1/keys", { name: "walker" })).json()) as Json).key as string;
    const document = (await (await app.request("/openapi.json")).json()) as Json;
    const params: Record<string, string> = {
      id: created.id,
      name: "walked__echo",
      server: "walked",
      threadId: "t-walk",
      chatId: "chat-walk",
    };
    const operations = Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
        .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation: operation as Json })),
    );
    const request = (token: string, method: string, path: string) =>
      app.request(
        path.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(params[param] ?? "x")),
        {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(method === "GET" || method === "DELETE" ? {} : { body: "{}" }),
        },
      );

    // Act + Assess
    const admin = operations.filter(({ operation }) =>
      (operation.tags ?? []).some(
        // The console's secured operation (signing everyone out) is the admin's too.
        (tag: string) => ADMIN_TAGS.has(tag) || (tag === "console" && operation.security),
      ),
    );
    const client = operations.filter((op) => !admin.includes(op) && op.operation.security);
    expect(admin.length).toBeGreaterThanOrEqual(12);
    expect(client.length).toBeGreaterThanOrEqual(8);
    for (const { method, path, operation } of admin) {
      const response = await request(key, method, path);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(((await response.json()) as Json).code).toBe("auth.forbidden");
      expect(Object.keys(operation.responses), `${method} ${path} documents 403`).toContain("403");
    }
    for (const { method, path } of client) {
      const response = await request(key, method, path);
      expect([401, 403], `${method} ${path} with a key → ${response.status}`).not.toContain(response.status);
    }
    // The key was refused before anything happened: the server is still there.
    expect((await call("GET", `/v1/servers/${created.id}`)).status).toBe(200);
    for (const { method, path } of [...admin, ...client]) {
      const response = await request(TEST_ADMIN_TOKEN, method, path);
      expect([401, 403], `${method} ${path} with the admin token`).not.toContain(response.status);
    }
  });
});
