/**
 * Data plane — the warm path's cost, counted: after one warm-up call, N further calls cost exactly N
 * upstream HTTP requests (counted both by the gateway's outbound fetch and by the upstream itself),
 * zero KMS calls, and — with the directory caching DynamoDB reads for 1 s — at most one directory
 * refresh (3 queries) for 20 calls made in under a second. Also holds at concurrency 16, and for
 * a stateless upstream.
 */
import { createGuardedFetch } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { countAwsCalls, createConnected, type Stack, startGatewayStack, uniqueName } from "./helpers";

/** Requests the gateway's data plane sent, by URL. */
const outbound = new Map<string, number>();
const guarded = createGuardedFetch({ allowPrivate: true });
const countingFetch: typeof fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  outbound.set(url, (outbound.get(url) ?? 0) + 1);
  return guarded(input, init);
};

describe("data plane: warm path costs one upstream request, no KMS call, cached DynamoDB reads", () => {
  let stack: Stack;
  let kms: ReturnType<typeof countAwsCalls>;
  let ddb: ReturnType<typeof countAwsCalls>;
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    // The calls' latency history is written off the request path, once per server and ended 10 s
    // slot: pushed past the suite here, so the DynamoDB calls counted below are the warm path's alone.
    stack = await startGatewayStack({ gateway: { fetch: countingFetch }, callLatencyFlushMs: 3_600_000 });
    kms = countAwsCalls(stack.store.clients.kms);
    ddb = countAwsCalls(stack.store.clients.ddb);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  /** A connected server with a sealed header (so a cold open has to ask KMS). */
  async function connectedServer(options: Parameters<typeof startUpstream>[0] = {}) {
    const upstream = await startUpstream({ requireBearer: "warm-path-token", ...options });
    upstreams.push(upstream);
    const name = uniqueName("warm");
    await createConnected(stack, {
      name,
      url: upstream.url,
      headers: { Authorization: "Bearer warm-path-token" },
    });
    return { upstream, name };
  }

  function resetCounts(upstream: Upstream) {
    upstream.resetCounters();
    outbound.clear();
    kms.reset();
    ddb.reset();
  }

  const sent = (url: string) => outbound.get(url) ?? 0;

  it("the cold call opens a session (reads the sealed config: KMS); the next N calls cost exactly N upstream requests and no KMS call", async () => {
    const { upstream, name } = await connectedServer();
    resetCounts(upstream);
    expect(await stack.callTool(`${name}__echo`, { text: "warm-up" })).toMatchObject({ status: 200 });
    // The counters see the cold path: initialize + initialized + the call (+ the standalone GET stream).
    expect(kms.byCommand.DecryptCommand ?? 0).toBeGreaterThanOrEqual(1);
    expect(sent(upstream.url)).toBeGreaterThanOrEqual(3);

    await new Promise((resolve) => setTimeout(resolve, 200)); // let the session's GET stream settle
    resetCounts(upstream);
    const N = 10;
    for (let i = 0; i < N; i++) {
      const response = await stack.callTool(`${name}__add`, { a: i, b: 1 });
      expect(response).toMatchObject({ status: 200, body: { structuredContent: { sum: i + 1 } } });
    }
    expect(upstream.requests).toBe(N);
    expect(upstream.toolCalls).toBe(N);
    expect(upstream.connections).toBe(0); // keep-alive: no new TCP connection either
    expect(sent(upstream.url)).toBe(N);
    expect([...outbound.keys()]).toEqual([upstream.url]);
    expect(kms.total).toBe(0);
  });

  it("20 warm calls in under a second do at most one directory refresh (≤ 3 DynamoDB queries)", async () => {
    const { upstream, name } = await connectedServer();
    expect(await stack.callTool(`${name}__echo`, { text: "warm-up" })).toMatchObject({ status: 200 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    resetCounts(upstream);

    const started = Date.now();
    for (let i = 0; i < 20; i++) {
      expect((await stack.callTool(`${name}__echo`, { text: `n${i}` })).status).toBe(200);
    }
    const elapsed = Date.now() - started;
    expect(elapsed, "20 warm calls took too long for this check to mean anything").toBeLessThan(1_000);
    expect(ddb.total, JSON.stringify(ddb.byCommand)).toBeLessThanOrEqual(3);
    expect(kms.total).toBe(0);
    expect(upstream.requests).toBe(20);
  });

  it("16 concurrent warm calls cost 16 upstream requests and no KMS call", async () => {
    const { upstream, name } = await connectedServer();
    expect(await stack.callTool(`${name}__echo`, { text: "warm-up" })).toMatchObject({ status: 200 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    resetCounts(upstream);

    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => stack.callTool(`${name}__add`, { a: i, b: i })),
    );
    results.forEach((r, i) => {
      expect(r).toMatchObject({ status: 200, body: { structuredContent: { sum: 2 * i } } });
    });
    expect(upstream.requests).toBe(16);
    expect(sent(upstream.url)).toBe(16);
    expect(kms.total).toBe(0);
  });

  it("a stateless JSON upstream: one request per warm call too", async () => {
    const { upstream, name } = await connectedServer({ stateless: true, jsonResponse: true });
    expect(await stack.callTool(`${name}__echo`, { text: "warm-up" })).toMatchObject({ status: 200 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    resetCounts(upstream);
    for (let i = 0; i < 5; i++)
      expect((await stack.callTool(`${name}__echo`, { text: "s" })).status).toBe(200);
    expect(upstream.requests).toBe(5);
    expect(sent(upstream.url)).toBe(5);
    expect(kms.total).toBe(0);
  });

  it("a cold call is shared: 8 concurrent first calls open one session (one KMS read, one initialize)", async () => {
    const { upstream, name } = await connectedServer();
    resetCounts(upstream);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => stack.callTool(`${name}__echo`, { text: "cold" })),
    );
    for (const r of results) expect(r.status).toBe(200);
    expect(kms.byCommand.DecryptCommand).toBe(1);
    expect(upstream.toolCalls).toBe(8);
    expect(upstream.sessions).toBeLessThanOrEqual(2); // the worker's probe session may still be closing
  });
});
