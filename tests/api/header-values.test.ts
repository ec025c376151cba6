/**
 * Admin API, header values with CR, LF or NUL (header splitting / smuggling): refused at registration
 * on create, PATCH and import, and nothing is stored.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { createServer, expectProblem, freshApp, httpServer, type TestApp } from "./helpers";

/** What a value with CR, LF or NUL is told, beside its field. */
const CR_LF_NUL = (field: string) => ({ field, message: "Must not contain CR, LF or NUL." });

let app: TestApp;
beforeEach(async () => {
  app = await freshApp();
});

describe("header values with CR, LF or NUL", () => {
  const BAD = [
    ["CR LF", "Bearer abc\r\nX-Injected: 1"],
    ["LF", "abc\ndef"],
    ["CR", "abc\rdef"],
    ["NUL", "abc\u0000def"],
  ] as const;

  it.each(BAD)("are refused on create (%s): 400, nothing stored", async (_, value) => {
    const problem = await expectProblem(
      await app.call("POST", "/v1/servers", httpServer("crlf", { headers: { "X-Key": value } })),
      400,
      "request.invalid",
    );

    expect(problem.errors).toEqual([CR_LF_NUL("headers.X-Key")]);
    expect(await app.store.servers.listPlain()).toEqual([]);
  });

  it.each(BAD)("are refused on PATCH (%s): 400, nothing changes", async (_, value) => {
    const server = await createServer(app, httpServer("crlf", { headers: { "X-Key": "ok" } }));

    const problem = await expectProblem(
      await app.call("PATCH", `/v1/servers/${server.id}`, { headers: { "X-Key": value } }),
      400,
      "request.invalid",
    );

    expect(problem.errors).toEqual([CR_LF_NUL("headers.X-Key")]);
    expect(await app.store.servers.get(server.id)).toMatchObject({ version: 1, headers: { "X-Key": "ok" } });
  });

  it.each(BAD)("are refused on import (%s): 400 import.invalid_entry, nothing stored", async (_, value) => {
    const document = {
      mcpServers: {
        crlf: { url: "https://crlf.example.com/mcp", headers: { Authorization: value } },
        fine: { command: "npx" },
      },
    };

    const problem = await expectProblem(
      await app.call("POST", "/v1/servers/import", document),
      400,
      "import.invalid_entry",
    );

    expect(problem.errors).toEqual([{ entry: "crlf", ...CR_LF_NUL("headers.Authorization") }]);
    expect(await app.store.servers.listPlain()).toEqual([]);
  });
});

describe("headers no request could carry, or the connection sets itself", () => {
  const CASES = [
    [
      "a value past Latin-1 (€)",
      { "X-Price": "5 €" },
      { field: "headers.X-Price", message: "Must hold only characters an HTTP header can carry" },
    ],
    [
      "an emoji",
      { "X-Hello": "hi 👋" },
      { field: "headers.X-Hello", message: "Must hold only characters an HTTP header can carry" },
    ],
    [
      "Host",
      { Host: "evil.example.com" },
      { field: "headers.Host", message: "The name is one the gateway or the connection sets itself" },
    ],
    [
      "Transfer-Encoding",
      { "transfer-encoding": "chunked" },
      { field: "headers.transfer-encoding", message: "The name is one the gateway" },
    ],
  ] as const;

  it.each(CASES)("are refused on create (%s), in words, and nothing is stored", async (_, headers, said) => {
    const problem = await expectProblem(
      await app.call("POST", "/v1/servers", httpServer("latin", { headers })),
      400,
      "request.invalid",
    );
    expect(problem.errors).toEqual([{ field: said.field, message: expect.stringContaining(said.message) }]);
    expect(await app.store.servers.listPlain()).toEqual([]);
  });

  it.each(CASES)("are refused on PATCH and import (%s): nothing changes", async (_, headers, said) => {
    const server = await createServer(app, httpServer("latin", { headers: { "X-Key": "ok" } }));
    const patched = await expectProblem(
      await app.call("PATCH", `/v1/servers/${server.id}`, { headers }),
      400,
      "request.invalid",
    );
    expect(patched.errors).toEqual([{ field: said.field, message: expect.stringContaining(said.message) }]);
    expect(await app.store.servers.get(server.id)).toMatchObject({ version: 1, headers: { "X-Key": "ok" } });

    const imported = await expectProblem(
      await app.call("POST", "/v1/servers/import", {
        mcpServers: { other: { url: "https://o.example.com/mcp", headers } },
      }),
      400,
      "import.invalid_entry",
    );
    expect(imported.errors).toEqual([
      { entry: "other", field: said.field, message: expect.stringContaining(said.message) },
    ]);
    expect((await app.store.servers.listPlain()).map((s) => s.name)).toEqual(["latin"]);
  });
});
