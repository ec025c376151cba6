/**
 * Connections to the runner stay few. Closing a thread releases the gateway's pooled sessions of that
 * thread at once (not when they idle out, 5 min later); a face holds no standing stream per session
 * (GET is 405: a stateless face has nothing to push); and a 2,000-call burst at concurrency 50 through
 * the runner never holds more than the internal fetch's cap (32) of connections to it.
 */
import { DEFAULT_SOCKET_LIMITS, SessionPool } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectionsTo,
  createServer,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

const THREADS = 20;
const CALLS = 2_000;
const CONCURRENCY = 50;

describe("runner: connections to it stay few", () => {
  let stack: RunnerStack;
  let port: number;
  const pool = new SessionPool();

  beforeAll(async () => {
    stack = await startRunnerStack({ maxChildren: THREADS + 5 }, { gateway: { pool } });
    port = Number(new URL(stack.runner?.url ?? "").port);
  });
  afterAll(async () => {
    pool.close();
    await stack?.cleanup();
  });

  it(`closing ${THREADS} threads releases their pooled sessions at once; no stream stays open per session`, async () => {
    const name = uniqueName("threaded");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO],
      scope: "thread",
    });
    await reaches(stack, id, "connected", 20_000);
    const threads = Array.from({ length: THREADS }, (_, i) => `sockets-${i}-${name}`);
    for (const thread of threads) {
      expect(
        (
          await stack.call("POST", `/v1/threads/${thread}/servers/${id}`, {
            worktreeRoot: stack.worktree(thread),
          })
        ).status,
      ).toBe(201);
      const call = await stack.callTool(`${name}__ping`, {}, thread);
      expect(call.status).toBe(200);
      expect(textOf(call.body)).toBe("pong");
    }
    expect(pool.size).toBe(THREADS);
    // A moment after the calls: no connection is held per session (only a few idle keep-alive ones).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const open = await connectionsTo(port);

    for (const thread of threads)
      expect((await stack.call("DELETE", `/v1/threads/${thread}`)).status).toBe(200);
    const left = pool.size;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const afterClose = await connectionsTo(port);
    console.log(
      `[sockets] ${THREADS} thread sessions: ${open} connections to the runner; after closing the threads ${left} pooled sessions, ${afterClose} connections`,
    );
    expect(left).toBe(0);
    expect(open).toBeLessThanOrEqual(DEFAULT_SOCKET_LIMITS.maxFreeSockets + 2);
    expect(afterClose).toBeLessThanOrEqual(DEFAULT_SOCKET_LIMITS.maxFreeSockets + 2);
  }, 90_000);

  it(`${CALLS} calls at concurrency ${CONCURRENCY} through the runner hold at most the cap of connections to it`, async () => {
    const name = uniqueName("burst");
    const id = await createServer(stack, { name, command: process.execPath, args: [TINY_STDIO] });
    await reaches(stack, id, "connected", 20_000);
    await waitFor(
      async () => (await stack.callTool(`${name}__ping`)).status,
      (status) => status === 200,
      { timeoutMs: 5_000 },
    );
    let peak = 0;
    let bursting = true;
    const sampler = (async () => {
      while (bursting) peak = Math.max(peak, await connectionsTo(port));
    })();
    let next = 0;
    let failed = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          next++;
          if ((await stack.callTool(`${name}__ping`)).status !== 200) failed++;
        }
      }),
    );
    bursting = false;
    await sampler;
    const took = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = await connectionsTo(port);
    const settled = await waitFor(
      () => connectionsTo(port),
      (open) => open === 0,
      { timeoutMs: DEFAULT_SOCKET_LIMITS.freeSocketTimeoutMs + 3_000 },
    );
    console.log(
      `[sockets] ${CALLS} calls at ${CONCURRENCY} through the runner in ${took.toFixed(0)} ms: peak ${peak} connections to it, ${after} right after, ${settled} settled`,
    );
    expect(failed).toBe(0);
    expect(peak).toBeLessThanOrEqual(DEFAULT_SOCKET_LIMITS.maxSockets + 1);
    expect(after).toBeLessThanOrEqual(DEFAULT_SOCKET_LIMITS.maxFreeSockets + 1);
  }, 120_000);
});
