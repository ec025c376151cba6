/**
 * One caller cannot take a server down for the others. Only transport loss marks a server failed from
 * the data plane; arguments nested deeper than 64 levels are refused (400 `request.too_deep`) before
 * anything reaches the upstream; an HTTP error on one call while the server still answers a ping goes
 * back to that caller only.
 */
import { createServer as createHttpServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createKey } from "../mcp/helpers";
import {
  createConnected,
  type Json,
  type Stack,
  startGatewayStack,
  statusReader,
  uniqueName,
} from "./helpers";

/** `{"a":[{"a":[…]}]}` nested `levels` deep, as JSON text (never built as an object here). */
function deepArguments(levels: number): string {
  return `${'{"a":['.repeat(levels / 2)}1${"]}".repeat(levels / 2)}`;
}

describe("gateway: hostile callers", () => {
  let stack: Stack;
  let upstream: Upstream;
  let id: string;
  const name = uniqueName("shared");

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstream = await startUpstream({ name: "shared-upstream" });
    id = await createConnected(stack, { name, url: upstream.url });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("50 calls with 10,000-deep arguments from one key → 400s; another key is served throughout", async () => {
    const [attacker, neighbour] = await Promise.all([
      createKey(stack, uniqueName("attacker")),
      createKey(stack, uniqueName("neighbour")),
    ]);
    upstream.resetCounters();
    const states = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        states.add((await statusReader(stack, id)()).state);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const body = `{"arguments":${deepArguments(10_000)}}`;

    const attacks = Array.from({ length: 50 }, (_, i) =>
      stack.request("POST", `/v1/tools/${name}__echo/call`, {
        body: i % 2 ? body : body.replace('"arguments":', '"chat":"c","arguments":'),
        headers: { authorization: `Bearer ${attacker.key}` },
      }),
    );
    const neighbours = Array.from({ length: 20 }, (_, i) =>
      stack.request("POST", `/v1/tools/${name}__echo/call`, {
        body: { arguments: { text: `hello ${i}` } },
        headers: { authorization: `Bearer ${neighbour.key}` },
      }),
    );
    const [attacked, served] = await Promise.all([Promise.all(attacks), Promise.all(neighbours)]);
    watching = false;
    await watcher;

    for (const response of attacked) {
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: "request.too_deep", status: 400 });
    }
    for (const [i, response] of served.entries()) {
      expect(response.status).toBe(200);
      expect(response.body.structuredContent).toEqual({ text: `hello ${i}` });
    }
    expect(upstream.toolCalls).toBe(20); // nothing of the attacker's reached the upstream
    expect([...states]).toEqual(["connected"]);
  });

  it("the MCP endpoints refuse deep tools/call arguments with a JSON-RPC error naming request.too_deep", async () => {
    const key = await createKey(stack, uniqueName("mcp-attacker"));
    upstream.resetCounters();

    const responses = await Promise.all(
      [`/mcp`, `/mcp/${name}`].map(async (path) => {
        const tool = path === "/mcp" ? `${name}__echo` : "echo";
        const response = await fetch(`${stack.api.url}${path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key.key}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
          },
          body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${tool}","arguments":${deepArguments(10_000)}}}`,
        });
        return { status: response.status, body: (await response.json()) as Json };
      }),
    );

    for (const response of responses) {
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, data: { code: "request.too_deep", limit: 64 } },
      });
    }
    expect(upstream.toolCalls).toBe(0);
    expect((await statusReader(stack, id)()).state).toBe("connected");
  });

  it("arguments exactly 64 levels deep still reach the upstream", async () => {
    let args: unknown = "x";
    for (let i = 0; i < 63; i++) args = { text: "deep", nested: args };
    const response = await stack.callTool(`${name}__echo`, args as Record<string, unknown>);

    // The upstream validates its own schema; what matters is that the gateway let it through.
    expect(response.status).toBe(200);
  });
});

describe("gateway: an HTTP error on one call while the server answers pings", () => {
  let stack: Stack;
  let upstream: Upstream;
  let proxy: Server;
  const name = uniqueName("flaky");

  beforeAll(async () => {
    stack = await startGatewayStack();
    upstream = await startUpstream({ name: "flaky-upstream" });
    // In front of the upstream: a tools/call whose arguments say "boom" gets HTTP 500; all else passes.
    const target = new URL(upstream.url);
    proxy = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        if (body.includes('"boom"')) {
          res.writeHead(500, { "content-type": "text/plain" }).end("internal server error");
          return;
        }
        const forward = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on("error", () => res.destroy());
        forward.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve()));
    const { port } = proxy.address() as AddressInfo;
    await createConnected(stack, { name, url: `http://127.0.0.1:${port}/mcp` });
  });
  afterAll(async () => {
    await stack?.stop();
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await upstream?.close();
  });

  it("→ 502 upstream.error for that caller; the server stays connected and the next call is served", async () => {
    const failed = await stack.callTool(`${name}__echo`, { text: "boom" });
    const next = await stack.callTool(`${name}__echo`, { text: "fine" });

    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe("upstream.error");
    expect(next.status).toBe(200);
    expect(next.body.structuredContent).toEqual({ text: "fine" });
    const after = await stack.call("GET", "/v1/servers");
    const server = (after.body.servers as Json[]).find((s) => s.name === name);
    expect(server.status.state).toBe("connected");
  });
});
