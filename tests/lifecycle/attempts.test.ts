/**
 * Connection lifecycle — one attempt in flight per generation, and backoff:
 * - a slow first connect (initialize answered after ~8 s, inside the 10 s deadline) is attempted once,
 *   though a sweep runs past the old 2 s lost-job grace and a duplicate connect job arrives meanwhile;
 * - a stdio child hung at initialize is gone (process and HOME) within 5 s of its failure being
 *   recorded, though a sweep and a duplicate connect came while its probe waited;
 * - a catalogue too large to store is not probed again at the base delay: its retry waits the cap,
 *   and the status shows when (`nextAttemptAt`);
 * - repeated failures' delays double up to the cap; a reconnect (a new generation) resets them;
 * - a connected server whose liveness check is refused once (a blip) is checked again 2 s later and
 *   stays connected; one that stays down is `failed` within 5 s of the first refusal.
 * Retry delays are shortened through the worker's knobs (base 1 s, cap a few seconds).
 */

import { existsSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { connect, createServer as createTcpServer, type Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { parkedPort } from "../../scripts/lib/processes";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  environ,
  isAlive,
  type RunnerStack,
  startRunnerStack,
  TINY_STDIO,
  withMarker,
} from "../runner/helpers";
import { createServer, reaches, type StatusView, statusReader, uniqueName } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";
import { closeHttp, listenLocal } from "./helpers";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A proxy in front of an MCP upstream that holds every `initialize` for `delayMs`, and counts them. */
interface SlowProxy {
  url: string;
  readonly initializes: number;
  close(): Promise<void>;
}

async function startSlowProxy(target: string, delayMs: number): Promise<SlowProxy> {
  let initializes = 0;
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const server: Server = createHttpServer(async (req, res) => {
    try {
      const payload = await body(req);
      if (payload.toString("utf8").includes('"method":"initialize"')) {
        initializes++;
        await sleep(delayMs);
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).flatMap(([name, value]) =>
          typeof value === "string" && !["host", "content-length", "connection"].includes(name)
            ? [[name, value]]
            : [],
        ),
      );
      const answer = await fetch(target, {
        method: req.method ?? "GET",
        headers,
        ...(payload.length > 0 ? { body: payload } : {}),
      });
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    } catch {
      res.destroy();
    }
  });
  const { url } = await listenLocal(server);
  return {
    url,
    get initializes() {
      return initializes;
    },
    close: () => closeHttp(server),
  };
}

/** Seconds from one ISO time to another. */
const secondsBetween = (from: string | null | undefined, to: string | null | undefined) =>
  (Date.parse(to ?? "") - Date.parse(from ?? "")) / 1_000;

describe("connection lifecycle: one attempt in flight per generation", () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it("a slow first connect (initialize after ~8 s) is attempted once: the sweep waits, a duplicate job is dropped", async () => {
    const stack = await startStack();
    closers.push(() => stack.stop());
    const upstream = await startUpstream({ name: "slow-first", jsonResponse: true });
    closers.push(() => upstream.close());
    const proxy = await startSlowProxy(upstream.url, 8_000);
    closers.push(() => proxy.close());

    const id = await createServer(stack, { name: uniqueName("slow-first"), url: proxy.url });
    await waitFor(
      async () => proxy.initializes,
      (n) => n >= 1,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    await sleep(3_000); // past the old 2 s lost-job grace, the first attempt still waiting
    await stack.sweep();
    await stack.store.jobs.send({ type: "connect", serverId: id, generation: 1 });

    const connected = await reaches(stack, id, "connected", 20_000);
    await sleep(2_000); // a duplicate attempt would have reached the upstream by now

    expect(connected.toolCount).toBeGreaterThan(0);
    expect(proxy.initializes).toBe(1);
    expect((await statusReader(stack, id)()).state).toBe("connected");
  }, 45_000);

  it("a stdio child hung at initialize is gone within 5 s of its failure, a sweep and a duplicate connect notwithstanding", async () => {
    const stack: RunnerStack = await startRunnerStack({}, { graceMs: 1_000 });
    closers.push(() => stack.cleanup());
    const mark = `--marker=attempts-${Date.now()}`;
    const id = await createServer(stack, {
      name: uniqueName("hung-child"),
      command: process.execPath,
      args: [TINY_STDIO, "--hang-at-initialize", mark],
    });
    const [pid] = await waitFor(
      async () => withMarker(mark),
      (pids) => pids.length === 1,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const child = pid as number;
    const home = environ(child).HOME as string;
    expect(existsSync(home)).toBe(true);

    await sleep(7_000); // the probe (deadline 10 s) still waits for the child's answer
    await stack.sweep();
    await stack.store.jobs.send({ type: "connect", serverId: id, generation: 1 });

    const failed = await reaches(stack, id, "failed", 10_000);
    const failedAt = Date.now();
    await waitFor(
      async () => isAlive(child) || existsSync(home),
      (left) => !left,
      { timeoutMs: 8_000, intervalMs: 50 },
    );
    const gone = Date.now() - failedAt;
    console.log(`[attempts] hung child gone ${gone} ms after its failure was seen`);

    expect(failed.reason).toBe("not_responding");
    expect(gone).toBeLessThanOrEqual(5_000);
    expect(await stack.call("DELETE", `/v1/servers/${id}`)).toMatchObject({ status: 204 });
  }, 60_000);
});

/** Every distinct failed status a server shows, until it has shown `count` of them. */
async function failures(stack: Stack, id: string, count: number, timeoutMs: number): Promise<StatusView[]> {
  const seen = new Map<string, StatusView>();
  await waitFor(
    async () => {
      const status = await statusReader(stack, id)();
      if (status.state === "failed" && status.lastConnectionFailureAt)
        seen.set(status.lastConnectionFailureAt, status);
      return seen.size;
    },
    (n) => n >= count,
    { timeoutMs, intervalMs: 50 },
  );
  return [...seen.values()];
}

describe("connection lifecycle: backoff", () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  async function stackWith(maxRetryDelaySeconds: number): Promise<Stack> {
    const stack = await startStack({ retryDelaySeconds: 1, maxRetryDelaySeconds });
    closers.push(() => stack.stop());
    return stack;
  }

  it("a catalogue too large to store waits the cap, not the base delay, and shows nextAttemptAt", async () => {
    const stack = await stackWith(6);
    // ~8 MB of poorly compressible descriptions: past the catalogue's 3.6 MB (gzipped) bound.
    const huge: Upstream = await startUpstream({
      name: "too-large",
      extraTools: 800,
      extraToolDescriptionBytes: 10_000,
    });
    closers.push(() => huge.close());

    const id = await createServer(stack, { name: uniqueName("too-large"), url: huge.url });
    const [failed] = await failures(stack, id, 1, 30_000);
    const requests = huge.requests;
    await sleep(3_500); // three base delays and more
    const later = await statusReader(stack, id)();

    expect(failed?.lastError).toMatch(/catalogue too large/);
    expect(huge.requests).toBe(requests);
    const wait = secondsBetween(failed?.lastConnectionFailureAt ?? null, failed?.nextAttemptAt ?? null);
    expect(wait).toBeGreaterThanOrEqual(4.5); // the 6 s cap, less at most a fifth of jitter
    expect(later.lastConnectionAttemptAt).toBe(failed?.lastConnectionAttemptAt);
    expect(later.nextAttemptAt).toBe(failed?.nextAttemptAt);
    expect(await stack.call("DELETE", `/v1/servers/${id}`)).toMatchObject({ status: 204 });
  }, 60_000);

  it("repeated failures wait 1 s, 2 s, 4 s, then the 4 s cap; a reconnect starts again at 1 s", async () => {
    const stack = await stackWith(4);
    const url = `http://127.0.0.1:${await parkedPort()}/mcp`;

    const id = await createServer(stack, { name: uniqueName("backoff"), url });
    const run = await failures(stack, id, 5, 30_000);
    const waits = run.map((s) => secondsBetween(s.lastConnectionFailureAt, s.nextAttemptAt));
    const gaps = run
      .slice(1)
      .map((s, i) => secondsBetween(run[i]?.lastConnectionAttemptAt ?? null, s.lastConnectionAttemptAt));
    console.log(
      `[attempts] backoff waits ${waits.map((w) => w.toFixed(1)).join(", ")} s; gaps ${gaps.map((g) => g.toFixed(1)).join(", ")} s`,
    );

    [1, 2, 4, 4, 4].forEach((nominal, i) => {
      expect(waits[i]).toBeGreaterThanOrEqual(nominal - 0.05);
      expect(waits[i]).toBeLessThan(nominal + 1);
    });
    [1, 2, 4, 4].forEach((nominal, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(nominal - 0.05);
      expect(gaps[i]).toBeLessThan(nominal + 2.5);
    });

    const last = run.at(-1)?.lastConnectionFailureAt ?? "";
    expect((await stack.call("POST", `/v1/servers/${id}/reconnect`)).status).toBe(202);
    const fresh = await waitFor(
      statusReader(stack, id),
      (s) => s.state === "failed" && (s.lastConnectionFailureAt ?? "") > last,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(secondsBetween(fresh.lastConnectionFailureAt, fresh.nextAttemptAt)).toBeLessThan(2);
    expect(await stack.call("DELETE", `/v1/servers/${id}`)).toMatchObject({ status: 204 });
  }, 60_000);
});

/**
 * A TCP switch in front of an upstream: while `down`, every connection is refused (destroyed at once,
 * and the ones open when it went down with it), and counted.
 */
async function startSwitch(targetPort: number) {
  let down = false;
  let refused = 0;
  const open = new Set<Socket>();
  const server = createTcpServer((socket) => {
    if (down) {
      refused++;
      socket.destroy();
      return;
    }
    const upstream = connect(targetPort, "127.0.0.1");
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    socket.pipe(upstream).pipe(socket);
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  });
  const { url } = await listenLocal(server);
  return {
    url,
    get refused() {
      return refused;
    },
    set down(value: boolean) {
      down = value;
      if (value) for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("connection lifecycle: a connected server's failed check is confirmed once", () => {
  it("a blip (refused for 1 s) leaves it connected; an outage shows as failed within 5 s of the first refusal", async () => {
    const stack = await startStack();
    const upstream = await startUpstream({ name: "blip" });
    const gate = await startSwitch(upstream.port);
    try {
      const id = await createServer(stack, { name: uniqueName("blip"), url: gate.url });
      await reaches(stack, id, "connected");
      const states = new Set<string>();
      const watch = async (ms: number) => {
        const until = Date.now() + ms;
        while (Date.now() < until) {
          states.add((await statusReader(stack, id)()).state);
          await sleep(50);
        }
      };

      gate.down = true;
      await stack.sweep();
      await waitFor(
        async () => gate.refused,
        (n) => n >= 1,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      setTimeout(() => {
        gate.down = false;
      }, 1_000);
      await watch(5_000);
      expect([...states]).toEqual(["connected"]);

      gate.down = true;
      const before = gate.refused;
      await stack.sweep();
      await waitFor(
        async () => gate.refused,
        (n) => n > before,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      const refusedAt = Date.now();
      const failed = await reaches(stack, id, "failed", 8_000);
      const shown = Date.now() - refusedAt;
      console.log(`[attempts] an outage showed as failed ${shown} ms after the check's first refusal`);
      expect(failed.reason).toBe("unreachable");
      expect(shown).toBeLessThanOrEqual(5_000);
    } finally {
      await gate.close();
      await upstream.close();
      await stack.stop();
    }
  }, 60_000);
});
