/** Admin API through a real HTTP listener (`listen(app, 0)`) against the emulator. */
import { type ClientRequest, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { type Listener, listen } from "@mcpgw/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { expectJson, expectProblem, freshApp, type Json, type TestApp, takeJobs } from "./helpers";

let app: TestApp;
let listener: Listener;

beforeAll(async () => {
  app = await freshApp();
  listener = await listen(app.app, 0);
});

afterAll(async () => {
  await listener?.close();
});

function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(`${listener.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/**
 * A POST through node:http on a connection of its own, `send` writing the body: node:http, not fetch,
 * where fetch would add a Content-Type or give up on an upload the server answers early.
 */
function rawPost(path: string, headers: Record<string, string>, send: (req: ClientRequest) => void) {
  return new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = httpRequest(`${listener.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...headers },
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (data: string) => {
        body += data;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"] ?? "", body }),
      );
    });
    send(req);
  });
}

describe("over real HTTP", () => {
  it("listens on 127.0.0.1 on the port it picked", () => {
    expect(listener.port).toBeGreaterThan(0);
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}`);
  });

  it("answers /healthz without auth", async () => {
    const response = await fetch(`${listener.url}/healthz`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("creates, lists, patches and deletes a server end to end", async () => {
    const created = await expectJson(
      await request("POST", "/v1/servers", {
        name: "over-http",
        url: "https://over-http.example.com/mcp",
        headers: { Authorization: "Bearer http-secret-1", "X-Team": "blue" },
      }),
      201,
    );
    expect(created).toMatchObject({
      name: "over-http",
      transport: "http",
      headers: { Authorization: "Bearer [SECRET]", "X-Team": "[SECRET]" },
      status: { state: "connecting" },
    });
    expect(await takeJobs(app.store)).toEqual([{ type: "connect", serverId: created.id, generation: 1 }]);

    const stdio = await expectJson(
      await request("POST", "/v1/servers", { name: "also-here", command: "npx", args: ["-y", "x"] }),
      201,
    );
    const listed = await expectJson<{ servers: Json[] }>(await request("GET", "/v1/servers"), 200);
    expect(listed.servers.map((server) => [server.name, (server.status as Json).state])).toEqual([
      ["also-here", "connecting"],
      ["over-http", "connecting"],
    ]);

    const fetched = await request("GET", "/v1/servers/over-http");
    const etag = fetched.headers.get("etag");
    expect(etag).toBe('"1"');
    await fetched.body?.cancel();
    const patched = await expectJson(
      await request(
        "PATCH",
        `/v1/servers/${created.id}`,
        { headers: { Authorization: "Bearer [SECRET]", "X-Team": "red" }, enabled: false },
        { "if-match": etag ?? "" },
      ),
      200,
    );
    expect(patched).toMatchObject({
      version: 2,
      enabled: false,
      headers: { Authorization: "Bearer [SECRET]", "X-Team": "[SECRET]" },
      status: { state: "disabled" },
    });
    expect(await app.store.servers.get(created.id as string)).toMatchObject({
      headers: { Authorization: "Bearer http-secret-1", "X-Team": "red" },
    });
    await expectProblem(
      await request("PATCH", `/v1/servers/${created.id}`, { enabled: true }, { "if-match": '"1"' }),
      412,
      "request.precondition_failed",
    );

    const deleted = await request("DELETE", "/v1/servers/over-http");
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    await expectProblem(await request("GET", `/v1/servers/${created.id}`), 404, "server.not_found");
    expect(await request("DELETE", `/v1/servers/${stdio.id}`)).toMatchObject({ status: 204 });
    expect(await expectJson(await request("GET", "/v1/servers"), 200)).toEqual({ servers: [] });
  });

  it("imports, reconnects and reads tools over HTTP", async () => {
    const imported = await expectJson<{ servers: Json[] }>(
      await request("POST", "/v1/servers/import", {
        mcpServers: { "imported-one": { type: "http", url: "https://one.example.com/mcp" } },
      }),
      201,
    );
    expect(imported.servers).toMatchObject([{ name: "imported-one" }]);

    const reconnected = await expectJson(await request("POST", "/v1/servers/imported-one/reconnect"), 202);
    expect(reconnected).toMatchObject({ status: { state: "connecting" } });
    expect(await expectJson(await request("GET", "/v1/servers/imported-one/tools"), 200)).toEqual({
      tools: [],
    });
    expect((await request("DELETE", "/v1/servers/imported-one")).status).toBe(204);
  });

  it("answers 401 problem+json without a token and with a wrong one", async () => {
    const missing = await fetch(`${listener.url}/v1/servers`);
    await expectProblem(missing, 401, "auth.unauthorized");
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);

    await expectProblem(
      await request("GET", "/v1/servers", undefined, { authorization: "Bearer wrong" }),
      401,
      "auth.unauthorized",
    );
    await expectProblem(
      await fetch(`${listener.url}/v1/servers`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "sneaky", url: "https://x.example.com" }),
      }),
      401,
      "auth.unauthorized",
    );
    expect(await app.store.servers.getByName("sneaky")).toBeUndefined();
  });

  it("answers 413 problem+json to a body over 1 MiB", async () => {
    const body = JSON.stringify({
      name: "huge",
      url: "https://x.example.com",
      headers: { P: "a".repeat(1_100_000) },
    });

    await expectProblem(await request("POST", "/v1/servers", body), 413, "request.too_large");
    expect(await app.store.servers.getByName("huge")).toBeUndefined();
  });

  it("answers 413 to an over-limit body streamed without a Content-Length (chunked)", async () => {
    // undici gives up on an upload the server answers early; curl and node:http read the answer.
    const response = await rawPost("/v1/servers", { "content-type": "application/json" }, (req) => {
      const chunk = "a".repeat(64 * 1024);
      let written = 0;
      req.write('{"name":"chunked","url":"https://x.example.com","pad":"');
      const pump = () => {
        while (written < 24) {
          written += 1;
          if (!req.write(chunk)) {
            req.once("drain", pump);
            return;
          }
        }
        req.end('"}');
      };
      pump();
    });

    expect(response.status).toBe(413);
    expect(response.type).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response.body)).toMatchObject({ status: 413, code: "request.too_large" });
    expect(await app.store.servers.getByName("chunked")).toBeUndefined();
  });

  it("stays usable for the next requests after refusing a body it never read (401, 413)", async () => {
    const refusals = [
      request("POST", "/v1/servers", { pad: "a".repeat(900_000) }, { authorization: "Bearer wrong" }),
      request("POST", "/v1/servers", { pad: "a".repeat(1_100_000) }),
    ];
    for (const refusal of refusals) {
      const response = await refusal;
      expect([401, 413]).toContain(response.status);
      await response.body?.cancel();

      // Sequential follow-ups: a half-read keep-alive connection would fail one of them.
      for (let i = 0; i < 4; i += 1) {
        const followUp = await request("GET", "/v1/secrets");
        expect(followUp.status).toBe(200);
        await followUp.text();
      }
    }
  });

  it("answers TRACE (no declared method) with 405 and Allow, as problem+json", async () => {
    // Raw: Node's fetch refuses TRACE, and its http client would frame one with a chunked body.
    const socket = connect(listener.port, "127.0.0.1");
    socket.end(
      `TRACE /v1/servers/any HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nConnection: close\r\n\r\n`,
    );
    let raw = "";
    for await (const chunk of socket) raw += chunk.toString();

    const [head = "", body = ""] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 405 /);
    expect(head).toMatch(/\r\nallow: DELETE, GET, HEAD, PATCH\r\n/i);
    expect(JSON.parse(body)).toMatchObject({ status: 405, code: "request.method_not_allowed" });
  });

  it("answers malformed JSON with 400 request.malformed_json", async () => {
    await expectProblem(await request("POST", "/v1/servers", "{nope"), 400, "request.malformed_json");
  });

  it("answers a body not sent as JSON with 415 request.unsupported_media_type, naming the header to send", async () => {
    const body = JSON.stringify({ name: "typeless", url: "https://x.example.com" });
    // As curl -d sends it, as fetch sends a string, and with no Content-Type at all.
    for (const type of ["application/x-www-form-urlencoded", "text/plain", undefined]) {
      const response = await rawPost("/v1/servers", type ? { "content-type": type } : {}, (req) =>
        req.end(body),
      );
      expect(response.status, String(type)).toBe(415);
      expect(response.type).toBe("application/problem+json");
      const problem = JSON.parse(response.body);
      expect(problem).toMatchObject({ status: 415, code: "request.unsupported_media_type" });
      expect(problem.detail).toContain("send it as JSON with Content-Type: application/json");
    }
    expect(await app.store.servers.getByName("typeless")).toBeUndefined();
  });

  it("serves the OpenAPI document and the docs page", async () => {
    const doc = await expectJson(await fetch(`${listener.url}/openapi.json`), 200);
    expect(doc.openapi).toMatch(/^3\.1/);
    const docs = await fetch(`${listener.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/);
    await docs.body?.cancel();
  });
});
