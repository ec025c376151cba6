/**
 * Data plane — what calls log, and what they never leak: start/end/duration/outcome lines with the
 * argument KEY names only (no argument values, no results, anywhere in the logs), heartbeat lines
 * while a call is in flight; and a server's Authorization token never appears in any response body
 * or log line — through successful calls, tool errors, RPC errors, timeouts and transport failures,
 * even when the upstream echoes the header back in its error body.
 */
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { waitFor } from "../support/stack";
import {
  createConnected,
  logLines,
  reaches,
  type Stack,
  sleep,
  startGatewayStack,
  statusReader,
  uniqueName,
} from "./helpers";

const SENTINEL_VALUE = "SENTINEL-VALUE-xyz";
const SENTINEL_RESULT = "SENTINEL-RESULT-qrs";
const TOKEN = "SENTINEL-TOKEN-9f8e7d6c5b4a";

/**
 * A pass-through HTTP proxy in front of an upstream that can be switched to answer every request
 * with a 500 whose body quotes the request's Authorization header (a careless upstream).
 */
async function startEchoingProxy(target: string) {
  const base = new URL(target);
  let echoAuth = false;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (echoAuth) {
      req.resume();
      res
        .writeHead(500, { "content-type": "application/json" })
        .end(JSON.stringify({ error: `rejected credentials: ${req.headers.authorization}` }));
      return;
    }
    const forward = httpRequest(
      { host: base.hostname, port: base.port, path: req.url, method: req.method, headers: req.headers },
      (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${base.pathname}`,
    setEchoAuth(on: boolean) {
      // Per request, also on kept-alive connections: a warm session stays warm (its GET stream stays open).
      echoAuth = on;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("data plane: call logs and secrets", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];
  const closers: Array<() => Promise<void>> = [];
  /** Every response body the tests received, to search for the token. */
  const bodies: string[] = [];

  beforeAll(async () => {
    stack = await startGatewayStack({ gateway: { heartbeatMs: 200 } });
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([...upstreams.map((u) => u.close()), ...closers.map((close) => close())]);
  });

  async function call(name: string, args: Record<string, unknown>) {
    const response = await stack.callTool(name, args);
    bodies.push(JSON.stringify(response.body));
    return response;
  }

  async function upstream(options: Parameters<typeof startUpstream>[0] = {}) {
    const started = await startUpstream(options);
    upstreams.push(started);
    return started;
  }

  it("logs start, end, duration and outcome with argument key names only — never argument values or results", async () => {
    const target = await upstream();
    const name = uniqueName("logs");
    await createConnected(stack, { name, url: target.url });

    const echoed = await call(`${name}__echo`, { text: SENTINEL_VALUE });
    expect(echoed).toMatchObject({ status: 200, body: { text: SENTINEL_VALUE } });
    const failed = await call(`${name}__fail`, { note: SENTINEL_VALUE, nested: { deep: SENTINEL_VALUE } });
    expect(failed).toMatchObject({ status: 200, body: { isError: true } });
    // Upstream JSON-RPC error whose message carries the (invalid) argument value.
    const rpc = await call(`${name}__add`, { a: SENTINEL_VALUE, b: 1 });
    expect(rpc.status).toBe(502);
    // A result distinct from the arguments.
    const added = await call(`${name}__echo`, { text: SENTINEL_RESULT });
    expect(added.status).toBe(200);

    const lines = logLines(stack).filter((line) => line.server === name);
    const started = lines.filter((line) => line.msg === "tool call started");
    const finished = lines.filter((line) => line.msg === "tool call finished");
    expect(started.map((line) => [line.tool, line.argumentKeys])).toEqual([
      ["echo", ["text"]],
      ["fail", ["note", "nested"]],
      ["add", ["a", "b"]],
      ["echo", ["text"]],
    ]);
    expect(finished.map((line) => [line.tool, line.outcome])).toEqual([
      ["echo", "ok"],
      ["fail", "tool_error"],
      ["add", "rpc"],
      ["echo", "ok"],
    ]);
    for (const line of finished) expect(line.durationMs).toEqual(expect.any(Number));
    for (const line of [...started, ...finished]) expect(line.requestId).toEqual(expect.any(String));

    const everything = stack.logs.join("\n");
    expect(everything).not.toContain(SENTINEL_VALUE);
    expect(everything).not.toContain(SENTINEL_RESULT);
  });

  it("logs a heartbeat while a call is in flight (heartbeatMs 200, slow 700 ms), and none after it ends", async () => {
    const target = await upstream();
    const name = uniqueName("beat");
    await createConnected(stack, { name, url: target.url });

    const response = await call(`${name}__slow`, { ms: 700 });
    expect(response).toMatchObject({ status: 200, body: { text: "done" } });
    const beats = () =>
      logLines(stack).filter((line) => line.server === name && line.msg === "tool call in flight");
    const seen = beats();
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.length).toBeLessThanOrEqual(5);
    for (const beat of seen) {
      expect(beat).toMatchObject({ tool: "slow", elapsedMs: expect.any(Number) });
    }
    const all = logLines(stack).filter((line) => line.server === name);
    const startIndex = all.findIndex((line) => line.msg === "tool call started");
    const endIndex = all.findIndex((line) => line.msg === "tool call finished");
    const beatIndexes = all.flatMap((line, index) => (line.msg === "tool call in flight" ? [index] : []));
    expect(beatIndexes).toHaveLength(seen.length);
    for (const index of beatIndexes) {
      expect(index).toBeGreaterThan(startIndex);
      expect(index).toBeLessThan(endIndex);
    }
    expect(all[endIndex]?.durationMs as number).toBeGreaterThanOrEqual(650);
    await sleep(500);
    expect(beats()).toHaveLength(seen.length);
  });

  it("a server's Authorization token never appears in a response body or a log line, through calls and failures", async () => {
    const target = await upstream({ requireBearer: TOKEN, jsonResponse: true });
    const proxy = await startEchoingProxy(target.url);
    closers.push(proxy.close);
    const name = uniqueName("secret");
    const id = await createConnected(stack, {
      name,
      url: proxy.url,
      headers: { Authorization: `Bearer ${TOKEN}` },
      timeoutSeconds: 1,
    });
    expect(target.lastHeaders?.authorization).toBe(`Bearer ${TOKEN}`); // it really is sent upstream

    // Results, tool errors, RPC errors, timeouts.
    expect((await call(`${name}__echo`, { text: "hello" })).status).toBe(200);
    expect((await call(`${name}__fail`, {})).body).toMatchObject({ isError: true });
    expect((await call(`${name}__add`, { a: "x", b: 1 })).status).toBe(502);
    expect((await call(`${name}__slow`, { ms: 2_000 })).status).toBe(504);
    bodies.push(JSON.stringify((await stack.call("GET", `/v1/servers/${id}`)).body));
    bodies.push(JSON.stringify(await stack.listTools()));

    // The upstream turns careless: every request is a 500 quoting the Authorization header it got.
    await reaches(stack, id, "connected", 10_000);
    proxy.setEchoAuth(true);
    const failure = await call(`${name}__echo`, { text: "hello" });
    expect(failure.status).toBe(502);
    expect(failure.body).toMatchObject({ code: "upstream.unreachable" });
    const failed = await reaches(stack, id, "failed", 5_000);
    bodies.push(JSON.stringify(failed));
    bodies.push(JSON.stringify((await stack.call("GET", `/v1/servers/${id}`)).body));

    // Cold path too: a fresh session (new config version) meets the same careless upstream.
    const patched = await stack.call("PATCH", `/v1/servers/${id}`, { timeoutSeconds: 2 });
    expect(patched.status).toBe(200);
    const refailed = await waitFor(statusReader(stack, id), (s) => s.state === "failed", {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    bodies.push(JSON.stringify(refailed));

    // Through the retry's reconnection too, then back to healthy for a last warm call.
    proxy.setEchoAuth(false);
    await stack.call("POST", `/v1/servers/${id}/reconnect`);
    await reaches(stack, id, "connected", 10_000);
    const healed = await waitFor(
      () => call(`${name}__echo`, { text: "again" }),
      (r) => r.status === 200,
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(healed.body).toMatchObject({ text: "again" });
    bodies.push(JSON.stringify(await stack.call("GET", `/v1/servers/${id}`)));

    for (const body of bodies) expect(body).not.toContain(TOKEN);
    const leaking = stack.logs.filter((line) => line.includes(TOKEN));
    expect(leaking).toEqual([]);
  });
});
