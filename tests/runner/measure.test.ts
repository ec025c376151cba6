/**
 * Figures for the issue note, measured in one run (printed, with loose sanity bounds only):
 * - spawn-to-ready through the runner vs the SDK's StdioClientTransport spawning the same server
 *   directly, as a ratio (server-everything, and the tiny fixture for the fixed overhead);
 * - the runner's memory per idle child: the child's own RSS, and the runner's heap and RSS growth.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  everythingEntry,
  type RunnerStack,
  rssKiB,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
} from "./helpers";

const ROUNDS = 8;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const ms = (value: number) => `${value.toFixed(0)} ms`;

describe("runner: measurements", () => {
  let stack: RunnerStack;
  const ids: Record<"everything" | "tiny", string> = { everything: "", tiny: "" };
  const argv: Record<"everything" | "tiny", string[]> = {
    everything: [everythingEntry(), "stdio"],
    tiny: [TINY_STDIO],
  };
  let thread = 0;

  beforeAll(async () => {
    stack = await startRunnerStack({ maxChildren: 100 });
    for (const kind of ["everything", "tiny"] as const) {
      // Thread-scoped and disabled: nothing but this test spawns it.
      ids[kind] = await createServer(stack, {
        name: uniqueName(`m-${kind}`),
        command: process.execPath,
        args: argv[kind],
        scope: "thread",
        enabled: false,
      });
    }
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  async function newThread(kind: "everything" | "tiny"): Promise<string> {
    const threadId = `m-${thread++}`;
    await stack.store.threads.register({
      threadId,
      serverId: ids[kind],
      worktreeRoot: stack.worktree(threadId),
      owner: "admin",
    });
    return threadId;
  }

  /** Runner: POST /threads/{t}/servers/{id} (spawn + initialize), answered once the child is ready. */
  async function viaRunnerStart(kind: "everything" | "tiny"): Promise<number> {
    const threadId = await newThread(kind);
    const started = performance.now();
    const response = await stack.runnerCall("POST", `/threads/${threadId}/servers/${ids[kind]}`);
    const elapsed = performance.now() - started;
    expect(response.status).toBe(200);
    await stack.runnerCall("DELETE", `/threads/${threadId}`);
    return elapsed;
  }

  /** Runner: an MCP client's initialize + first tools/list through the runner's HTTP face (cold child). */
  async function viaRunnerFace(kind: "everything" | "tiny"): Promise<number> {
    const threadId = await newThread(kind);
    const runner = stack.runner as NonNullable<RunnerStack["runner"]>;
    const started = performance.now();
    const client = new Client({ name: "measure", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`${runner.url}/servers/${ids[kind]}/threads/${threadId}/mcp`),
        {
          requestInit: { headers: { authorization: `Bearer ${runner.token}` } },
        },
      ),
    );
    const { tools } = await client.listTools();
    const elapsed = performance.now() - started;
    expect(tools.length).toBeGreaterThan(0);
    await client.close();
    await stack.runnerCall("DELETE", `/threads/${threadId}`);
    return elapsed;
  }

  /** Direct: the SDK's StdioClientTransport spawning the same command, initialize + first tools/list. */
  async function direct(kind: "everything" | "tiny"): Promise<number> {
    const started = performance.now();
    const client = new Client({ name: "measure", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: argv[kind],
        stderr: "pipe",
        cwd: stack.tempRoot,
      }),
    );
    const { tools } = await client.listTools();
    const elapsed = performance.now() - started;
    expect(tools.length).toBeGreaterThan(0);
    await client.close();
    return elapsed;
  }

  it("spawn-to-ready: runner vs the SDK's stdio client spawning the same server", async () => {
    for (const kind of ["tiny", "everything"] as const) {
      const times = { start: [] as number[], face: [] as number[], direct: [] as number[] };
      await direct(kind); // warm the page cache and the module graph once, for everyone
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate the order so neither side always runs on a warmer machine.
        const order =
          round % 2 ? (["direct", "start", "face"] as const) : (["face", "start", "direct"] as const);
        for (const mode of order) {
          times[mode].push(
            mode === "direct"
              ? await direct(kind)
              : mode === "start"
                ? await viaRunnerStart(kind)
                : await viaRunnerFace(kind),
          );
        }
      }
      const d = median(times.direct);
      const s = median(times.start);
      const f = median(times.face);
      console.log(
        `[runner] spawn-to-ready, ${kind} (median of ${ROUNDS}): SDK StdioClientTransport ${ms(d)}; ` +
          `runner POST /threads/…/servers/… ${ms(s)} (×${(s / d).toFixed(2)}); ` +
          `runner face initialize+tools/list ${ms(f)} (×${(f / d).toFixed(2)}); ` +
          `overhead ${ms(f - d)}`,
      );
      expect(s / d).toBeLessThan(10);
    }
  }, 120_000);

  it("memory per idle child", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const settle = async () => {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const N = 10;
    const manager = stack.runner?.instances;
    if (!manager) throw new Error("no runner");
    for (const kind of ["tiny", "everything"] as const) {
      // One spawn first so every module the path needs is loaded before the baseline.
      const warm = await newThread(kind);
      await manager.acquire(ids[kind], warm);
      await manager.stopThread(warm);
      const threads = await Promise.all(Array.from({ length: N }, () => newThread(kind)));
      await settle();
      const heapBefore = process.memoryUsage().heapUsed;
      const rssBefore = process.memoryUsage().rss;
      const instances = [];
      for (const threadId of threads) instances.push(await manager.acquire(ids[kind], threadId));
      // Idle: started, initialized, nothing in flight.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await settle();
      const heapDelta = (process.memoryUsage().heapUsed - heapBefore) / N;
      const rssDelta = (process.memoryUsage().rss - rssBefore) / N;
      const childRss = instances.map((instance) => rssKiB(instance.transport.pid as number));
      console.log(
        `[runner] idle ${kind} child (×${N}): child VmRSS median ${(median(childRss) / 1024).toFixed(1)} MiB ` +
          `(min ${(Math.min(...childRss) / 1024).toFixed(1)}, max ${(Math.max(...childRss) / 1024).toFixed(1)}); ` +
          `runner heap +${(heapDelta / 1024).toFixed(0)} KiB/child, runner RSS +${(rssDelta / 1024).toFixed(0)} KiB/child`,
      );
      expect(childRss.every((kib) => kib > 0)).toBe(true);
      await Promise.all(threads.map((threadId) => manager.stopThread(threadId)));
    }
  }, 120_000);
});
