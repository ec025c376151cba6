/**
 * Sockets per upstream are capped: a 2,000-call burst at concurrency 50 through one server never has
 * more than the cap (32) of request sockets open to it at once, leaves at most the kept-idle few (4)
 * a moment later and none after the idle timeout (4 s) — only the session's one standing event stream
 * stays. Counted by the upstream itself (`openConnections`); the test process's open fds are printed.
 * The session watch is off here: it pings a quiet session every few seconds, and each ping's socket
 * stays open as long as any idle one (4 s), so "settled" would hang on when the last ping fell.
 */
import { readdirSync } from "node:fs";
import { DEFAULT_SOCKET_LIMITS } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { waitFor } from "../support/stack";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "./helpers";

const CALLS = 2_000;
const CONCURRENCY = 50;

function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

describe("data plane: sockets per upstream are capped", () => {
  let stack: Stack;
  let upstream: Upstream;

  beforeAll(async () => {
    stack = await startGatewayStack({ gateway: { sessionCheckMs: 0 } });
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it(`${CALLS} calls at concurrency ${CONCURRENCY} stay under the cap, and leave (almost) nothing open`, async () => {
    const { maxSockets, maxFreeSockets, freeSocketTimeoutMs } = DEFAULT_SOCKET_LIMITS;
    expect(maxSockets).toBeLessThan(CONCURRENCY); // or the burst would prove nothing
    const name = uniqueName("burst");
    await createConnected(stack, { name, url: upstream.url });
    expect((await stack.callTool(`${name}__echo`, { text: "warm" })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, freeSocketTimeoutMs + 500));
    const fdsBefore = openFds();
    const idle = upstream.openConnections; // the session's standing GET stream

    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, upstream.openConnections);
    }, 2);
    let next = 0;
    let failed = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          next++;
          const call = await stack.callTool(`${name}__echo`, { text: "x" });
          if (call.status !== 200) failed++;
        }
      }),
    );
    const took = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, upstream.openConnections);
    await new Promise((resolve) => setTimeout(resolve, 250)); // closes past the idle cap land
    const afterBurst = upstream.openConnections;
    const fdsAfterBurst = openFds();
    await waitFor(
      async () => upstream.openConnections,
      (open) => open <= idle,
      { timeoutMs: freeSocketTimeoutMs + 3_000, intervalMs: 100 },
    );
    const fdsSettled = openFds();
    console.log(
      `[sockets] ${CALLS} calls at ${CONCURRENCY} in ${took.toFixed(0)} ms: upstream connections idle ${idle}, peak ${peak}, right after ${afterBurst}, settled ${upstream.openConnections}; test process fds ${fdsBefore} → ${fdsAfterBurst} → ${fdsSettled}`,
    );

    expect(failed).toBe(0);
    expect(peak).toBeLessThanOrEqual(maxSockets + idle);
    expect(afterBurst).toBeLessThanOrEqual(maxFreeSockets + idle);
    expect(upstream.openConnections).toBeLessThanOrEqual(idle);
  }, 120_000);
});
