/**
 * Data plane — a client that disconnects mid-call cancels the upstream call: the upstream's handler
 * sees `notifications/cancelled` (its signal aborts) soon after the caller aborts its request, the
 * gateway logs the call as finished with outcome `cancelled`, and the server stays connected with its
 * warm session usable. One caller leaving never fails another caller's call (a shared cold open).
 */
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { waitFor } from "../support/stack";
import {
  createConnected,
  logLines,
  type Stack,
  sleep,
  startGatewayStack,
  statusReader,
  uniqueName,
} from "./helpers";
import { type ObservingUpstream, startObservingUpstream } from "./observing-upstream";

/** A pass-through proxy that holds every request `delayMs` before forwarding it (a slow network). */
async function startDelayingProxy(target: string) {
  const base = new URL(target);
  let delayMs = 0;
  const server = createServer((req, res) => {
    setTimeout(() => {
      const forward = httpRequest(
        { host: base.hostname, port: base.port, path: req.url, method: req.method, headers: req.headers },
        (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
        },
      );
      forward.on("error", () => res.destroy());
      req.pipe(forward);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${base.pathname}`,
    setDelay(ms: number) {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.concurrent("data plane: caller disconnect cancels the upstream call", () => {
  let stack: Stack;
  let observing: ObservingUpstream;
  let fixture: Upstream;
  const name = uniqueName("cancel");
  const fixtureName = uniqueName("cancelfx");
  let id: string;

  beforeAll(async () => {
    [stack, observing, fixture] = await Promise.all([
      startGatewayStack(),
      startObservingUpstream(),
      startUpstream({ name: "cancel-fixture" }),
    ]);
    [id] = await Promise.all([
      createConnected(stack, { name, url: observing.url }),
      createConnected(stack, { name: fixtureName, url: fixture.url }),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([observing?.close(), fixture?.close()]);
  });

  it("aborting the request to the gateway during a 5 s call cancels it at the upstream", async ({
    expect,
  }) => {
    const controller = new AbortController();
    const call = stack.callTool(`${name}__wait`, { ms: 5_000 }, { signal: controller.signal });
    call.catch(() => undefined);
    await waitFor(
      async () => observing.started,
      (n) => n === 1,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    const abortedAt = Date.now();
    controller.abort();
    await expect(call).rejects.toThrow();

    await waitFor(
      async () => observing.cancelled,
      (n) => n === 1,
      { timeoutMs: 2_000, intervalMs: 20 },
    );
    const cancelledAfterMs = Date.now() - abortedAt;
    expect(cancelledAfterMs).toBeLessThan(2_000);
    expect(observing.finished).toBe(0);

    const finished = await waitFor(
      async () =>
        logLines(stack).find((line) => line.msg === "tool call finished" && line.server === name) as
          | Record<string, unknown>
          | undefined,
      (line) => line !== undefined,
      { timeoutMs: 2_000, intervalMs: 20 },
    );
    expect(finished).toMatchObject({ outcome: "cancelled", tool: "wait" });
    expect(finished?.durationMs as number).toBeLessThan(4_000);

    // A caller leaving is not a server failure: still connected, the warm session still works.
    expect(await statusReader(stack, id)()).toMatchObject({ state: "connected" });
    const next = await stack.callTool(`${name}__wait`, { ms: 10 });
    expect(next).toMatchObject({ status: 200, body: { text: "waited" } });
    expect(observing.finished).toBe(1);
  });

  it("the SDK fixture's slow call is cancelled too: no tool result is produced after the abort", async ({
    expect,
  }) => {
    const controller = new AbortController();
    const before = fixture.toolCalls;
    const call = stack.callTool(`${fixtureName}__slow`, { ms: 5_000 }, { signal: controller.signal });
    call.catch(() => undefined);
    await waitFor(
      async () => fixture.toolCalls,
      (n) => n === before + 1,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    const requestsBefore = fixture.requests;
    controller.abort();
    await expect(call).rejects.toThrow();
    const finished = await waitFor(
      async () =>
        logLines(stack).find((line) => line.msg === "tool call finished" && line.server === fixtureName) as
          | Record<string, unknown>
          | undefined,
      (line) => line !== undefined,
      { timeoutMs: 2_000, intervalMs: 20 },
    );
    expect(finished).toMatchObject({ outcome: "cancelled" });
    // The cancellation reached the upstream as its own request (notifications/cancelled).
    await waitFor(
      async () => fixture.requests,
      (n) => n > requestsBefore,
      { timeoutMs: 2_000, intervalMs: 20 },
    );
  });

  it("one caller leaving during a shared cold open does not fail the other caller waiting on it", async ({
    expect,
  }) => {
    const proxy = await startDelayingProxy(fixture.url);
    try {
      const name = uniqueName("shared");
      const id = await createConnected(stack, { name, url: proxy.url });
      proxy.setDelay(800); // the gateway has no session yet: its initialize will take a while
      const leaving = new AbortController();
      const first = stack.callTool(`${name}__echo`, { text: "a" }, { signal: leaving.signal });
      first.catch(() => undefined);
      await sleep(50);
      const second = stack.callTool(`${name}__echo`, { text: "b" });
      await sleep(200);
      leaving.abort();
      await expect(first).rejects.toThrow();
      expect(await second).toMatchObject({ status: 200, body: { text: "b" } });
      expect(await statusReader(stack, id)()).toMatchObject({ state: "connected" });
    } finally {
      await proxy.close();
    }
  });
});
