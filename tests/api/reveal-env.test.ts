/**
 * Admin API, `GET /v1/servers/{id}?reveal=env`: a stdio server's env values in the clear for the edit
 * form — admin only, logged with key names (never values), headers always masked.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  createServer,
  expectJson,
  expectProblem,
  freshApp,
  httpServer,
  type Json,
  stdioServer,
  type TestApp,
} from "./helpers";

let app: TestApp;
beforeEach(async () => {
  app = await freshApp();
});

describe("GET /v1/servers/{id}?reveal=env", () => {
  const SENTINEL = "sntl-reveal-6f2a9c01";

  it("shows a stdio server's env values and logs the key names only", async () => {
    const server = await createServer(app, stdioServer("cli", { env: { TOKEN: SENTINEL, MODE: "fast" } }));
    app.logs.length = 0;

    const response = await app.call("GET", `/v1/servers/${server.id}?reveal=env`);

    expect(response.headers.get("etag")).toBe('"1"');
    const view = await expectJson(response, 200);
    expect(view).toMatchObject({ id: server.id, env: { TOKEN: SENTINEL, MODE: "fast" } });
    const lines = app.logs.map((line) => JSON.parse(line) as Json);
    const revealed = lines.filter((line) => line.msg === "server env revealed");
    expect(revealed).toEqual([
      expect.objectContaining({ serverId: server.id, server: "cli", keys: ["TOKEN", "MODE"] }),
    ]);
    expect(app.logs.join("\n")).not.toContain(SENTINEL);
    expect(app.logs.join("\n")).not.toContain("fast");
  });

  it("works by name, and without `reveal` the values stay masked and nothing is logged", async () => {
    await createServer(app, stdioServer("cli", { env: { TOKEN: SENTINEL } }));
    app.logs.length = 0;

    const masked = await expectJson(await app.call("GET", "/v1/servers/cli"), 200);
    const shown = await expectJson(await app.call("GET", "/v1/servers/cli?reveal=env"), 200);

    expect(masked.env).toEqual({ TOKEN: "[SECRET]" });
    expect(shown.env).toEqual({ TOKEN: SENTINEL });
    const revealed = app.logs.filter((line) => (JSON.parse(line) as Json).msg === "server env revealed");
    expect(revealed).toHaveLength(1);
  });

  it("changes nothing for an HTTP server: headers stay masked, nothing is logged", async () => {
    const server = await createServer(
      app,
      httpServer("web", { headers: { Authorization: `Bearer ${SENTINEL}`, "X-Key": SENTINEL } }),
    );
    app.logs.length = 0;

    const response = await app.call("GET", `/v1/servers/${server.id}?reveal=env`);

    const text = await response.clone().text();
    const view = await expectJson(response, 200);
    expect(view.headers).toEqual({ Authorization: "Bearer [SECRET]", "X-Key": "[SECRET]" });
    expect(view).not.toHaveProperty("env");
    expect(text).not.toContain(SENTINEL);
    expect(app.logs.join("\n")).not.toContain("server env revealed");
  });

  it("refuses another reveal value with 400 request.invalid", async () => {
    await createServer(app, stdioServer("cli", { env: { TOKEN: SENTINEL } }));

    for (const reveal of ["headers", "ENV", "all", ""]) {
      const response = await app.call("GET", `/v1/servers/cli?reveal=${reveal}`);
      const text = await response.clone().text();
      await expectProblem(response, 400, "request.invalid");
      expect(text).not.toContain(SENTINEL);
    }
  });

  it("is admin-only: no token → 401, a client API key → 403", async () => {
    await createServer(app, stdioServer("cli", { env: { TOKEN: SENTINEL } }));
    const key = await expectJson<{ key: string }>(
      await app.call("POST", "/v1/keys", { name: "laptop" }),
      201,
    );

    const anonymous = await app.app.request("/v1/servers/cli?reveal=env");
    const client = await app.app.request("/v1/servers/cli?reveal=env", {
      headers: { authorization: `Bearer ${key.key}` },
    });

    const texts = [await anonymous.clone().text(), await client.clone().text()];
    await expectProblem(anonymous, 401, "auth.unauthorized");
    await expectProblem(client, 403, "auth.forbidden");
    for (const text of texts) expect(text).not.toContain(SENTINEL);
  });

  it("declares the optional `reveal` query parameter (enum env) in the OpenAPI document", async () => {
    const doc = await expectJson<{ paths: Record<string, Record<string, { parameters?: Json[] }>> }>(
      await app.call("GET", "/openapi.json"),
      200,
    );

    const parameters = doc.paths["/v1/servers/{id}"]?.get?.parameters ?? [];
    expect(parameters).toContainEqual(
      expect.objectContaining({
        name: "reveal",
        in: "query",
        required: false,
        schema: expect.objectContaining({ enum: ["env"] }),
      }),
    );
  });
});
