/**
 * Admin API, URL edits: moving a server to another origin (scheme, host or port) must not carry its
 * stored headers there — the headers are re-sent with real values or dropped, or the edit is refused
 * with `server.credentials_origin_changed` and nothing changes.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  createServer,
  expectJson,
  expectProblem,
  freshApp,
  httpServer,
  type Json,
  type TestApp,
  takeJobs,
} from "./helpers";

let app: TestApp;
beforeEach(async () => {
  app = await freshApp();
});

async function storedHeaders(id: string): Promise<Record<string, string>> {
  const server = await app.store.servers.get(id);
  if (server?.transport !== "http") throw new Error(`server ${id} is not an http server`);
  return server.headers;
}

describe("URL origin change (credentials stay with their origin)", () => {
  const TOKEN = "Bearer tok-origin-4d2e";
  const HEADERS = { Authorization: TOKEN, "X-Team": "blue" };
  const MOVED = "https://elsewhere.example.net/mcp";

  async function createWithHeaders(): Promise<Json & { id: string }> {
    const server = await createServer(app, httpServer("origin", { headers: HEADERS }));
    await takeJobs(app.store);
    return server;
  }

  /** The server is exactly as created: old URL, version 1, the same headers, no new job. */
  async function expectUnchanged(server: Json & { id: string }): Promise<void> {
    const view = await expectJson(await app.call("GET", `/v1/servers/${server.id}`), 200);
    expect(view).toMatchObject({ url: server.url, version: 1 });
    expect(await app.store.servers.get(server.id)).toMatchObject({
      url: server.url,
      version: 1,
      headers: HEADERS,
    });
    expect(await takeJobs(app.store)).toEqual([]);
  }

  it.each([
    ["another host", MOVED],
    ["another scheme", "http://origin.example.com/mcp"],
    ["another port", "https://origin.example.com:8443/mcp"],
  ])(
    "refuses a move to %s without the headers re-sent: 400 server.credentials_origin_changed, nothing stored",
    async (_, url) => {
      const server = await createWithHeaders();

      const problem = await expectProblem(
        await app.call("PATCH", `/v1/servers/${server.id}`, { url }),
        400,
        "server.credentials_origin_changed",
      );

      expect(problem.title).toBe("Credentials would go to a new origin");
      expect(problem.headers).toEqual(["Authorization", "X-Team"]);
      expect(JSON.stringify(problem)).not.toContain("tok-origin");
      await expectUnchanged(server);
    },
  );

  it.each([
    ["Authorization", { Authorization: "Bearer [SECRET]", "X-Team": "blue" }],
    ["X-Team", { Authorization: "Bearer tok-new-1", "X-Team": "[SECRET]" }],
  ])("refuses a move that keeps %s by submitting its mask", async (name, headers) => {
    const server = await createWithHeaders();

    const problem = await expectProblem(
      await app.call("PATCH", `/v1/servers/${server.id}`, { url: MOVED, headers }),
      400,
      "server.credentials_origin_changed",
    );

    expect(problem.headers).toEqual([name]);
    await expectUnchanged(server);
  });

  it("allows a move with new real header values", async () => {
    const server = await createWithHeaders();

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, {
        url: MOVED,
        headers: { Authorization: "Bearer tok-new-2", "X-Team": "blue" },
      }),
      200,
    );

    expect(updated).toMatchObject({
      url: MOVED,
      version: 2,
      headers: { Authorization: "Bearer [SECRET]", "X-Team": "[SECRET]" },
    });
    expect(await storedHeaders(server.id)).toEqual({ Authorization: "Bearer tok-new-2", "X-Team": "blue" });
  });

  it("allows a move that drops the headers with `headers: {}`", async () => {
    const server = await createWithHeaders();

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, { url: MOVED, headers: {} }),
      200,
    );

    expect(updated).toMatchObject({ url: MOVED, version: 2, headers: {} });
    expect(await storedHeaders(server.id)).toEqual({});
  });

  it("keeps the headers on a same-origin change (path, query)", async () => {
    const server = await createWithHeaders();

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, {
        url: "https://origin.example.com/v2/mcp?tenant=7",
      }),
      200,
    );

    expect(updated).toMatchObject({ url: "https://origin.example.com/v2/mcp?tenant=7", version: 2 });
    expect(await storedHeaders(server.id)).toEqual(HEADERS);
  });

  it("allows any move of a server without headers", async () => {
    const server = await createServer(app, httpServer("bare"));

    const updated = await expectJson(
      await app.call("PATCH", `/v1/servers/${server.id}`, { url: MOVED }),
      200,
    );

    expect(updated).toMatchObject({ url: MOVED, version: 2, headers: {} });
  });
});
