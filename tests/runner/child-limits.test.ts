/**
 * Per-child limits: a child that passes its memory, CPU time or process limit is killed — that child
 * only, its process group with it — and its server goes `failed` with a `lastError` naming the limit.
 * A sibling child of another server keeps working. The limits are the server's own (`limits`), over
 * the runner's defaults.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createLogger } from "@mcpgw/core";
import { createIsolation } from "@mcpgw/runner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  isAlive,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  testUidBase,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

const HOSTILE = join(dirname(TINY_STDIO), "hostile-stdio.mjs");

/** Processes and threads of the session `sid` (a child leads its own), from /proc (zombies left out). */
function tasksOfSession(sid: number): number {
  let tasks = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // After the command name: field 3 (state) is fields[0], field 6 (session) fields[3], field 20 (threads) fields[17].
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && Number(fields[3]) === sid) tasks += Number(fields[17]);
  }
  return tasks;
}

describe("runner: per-child limits", () => {
  let stack: RunnerStack;
  const sibling = uniqueName("sibling");
  let siblingId: string;
  let siblingPid: number;

  beforeAll(async () => {
    stack = await startRunnerStack();
    siblingId = await createServer(stack, { name: sibling, command: process.execPath, args: [TINY_STDIO] });
    await reaches(stack, siblingId, "connected");
    siblingPid = await pidOf(stack, siblingId);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /** A hostile server with these limits, connected; its name, id and child pid. */
  async function hostile(prefix: string, limits: Record<string, number>) {
    const name = uniqueName(prefix);
    const id = await createServer(stack, { name, command: process.execPath, args: [HOSTILE], limits });
    await reaches(stack, id, "connected");
    return { name, id, pid: await pidOf(stack, id) };
  }

  /** The child is gone, its server failed with `lastError`, and the sibling still answers (same pid). */
  async function expectKilledAlone(id: string, pid: number, lastError: string) {
    await waitFor(
      async () => isAlive(pid),
      (alive) => !alive,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    const failed = await reaches(stack, id, "failed", 10_000);
    expect(failed.reason).toBe("failed");
    expect(failed.lastError).toBe(lastError);
    const ping = await stack.callTool(`${sibling}__ping`);
    expect(ping.status).toBe(200);
    expect(textOf(ping.body)).toBe("pong");
    expect(await pidOf(stack, siblingId)).toBe(siblingPid);
  }

  it("a child allocating past its memory limit is killed alone, and lastError says memory", async () => {
    const { name, id, pid } = await hostile("hog", { memoryMiB: 128 });
    const call = await stack.callTool(`${name}__hog`, { mib: 1_024 });
    expect(call.status).not.toBe(200);
    await expectKilledAlone(id, pid, "the server passed its memory limit (128 MiB) and was stopped");
    const view = await stack.call("GET", `/v1/servers/${id}`);
    expect(view.body.limits).toEqual({ memoryMiB: 128 });
  }, 60_000);

  it("a CPU spinner is killed at its CPU time limit", async () => {
    const { name, id, pid } = await hostile("spin", { cpuSeconds: 2 });
    const started = Date.now();
    const call = await stack.callTool(`${name}__spin`, { seconds: 30 });
    expect(call.status).not.toBe(200);
    console.log(`[runner] a spinner with a 2 s CPU limit was stopped after ${Date.now() - started} ms`);
    await expectKilledAlone(id, pid, "the server passed its CPU time limit (2 s) and was stopped");
  }, 60_000);

  it("a fork bomb is capped by the process limit and killed", async () => {
    const { name, id, pid } = await hostile("forks", { processes: 40 });
    let most = tasksOfSession(pid);
    let sampling = true;
    const sampler = (async () => {
      while (sampling && isAlive(pid)) {
        most = Math.max(most, tasksOfSession(pid));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const call = await stack.callTool(`${name}__fork`, { count: 200 });
    expect(call.status).not.toBe(200);
    await expectKilledAlone(
      id,
      pid,
      "the server passed its process limit (40 processes and threads) and was stopped",
    );
    sampling = false;
    await sampler;
    console.log(`[runner] a fork bomb under a limit of 40: at most ${most} tasks at once`);
    expect(most).toBeLessThanOrEqual(41);
    expect(tasksOfSession(pid)).toBe(0);
  }, 60_000);
});

describe("runner: per-child limits without uids of their own", () => {
  it("the process limit is still watched (and the runner says the kernel does not cap it)", async () => {
    const logger = createLogger({ level: "error", sink: () => {} });
    const isolation = createIsolation({ logger, uidBase: testUidBase(), uidCount: 10, canSwitchUids: false });
    const stack = await startRunnerStack({ isolation });
    try {
      const name = uniqueName("forks-shared");
      const id = await createServer(stack, {
        name,
        command: process.execPath,
        args: [HOSTILE],
        limits: { processes: 40 },
      });
      await reaches(stack, id, "connected");
      const pid = await pidOf(stack, id);
      expect((await stack.callTool(`${name}__fork`, { count: 200 })).status).not.toBe(200);
      await waitFor(
        async () => isAlive(pid),
        (alive) => !alive,
        { timeoutMs: 15_000, intervalMs: 50 },
      );
      const failed = await reaches(stack, id, "failed", 10_000);
      expect(failed.lastError).toBe(
        "the server passed its process limit (40 processes and threads) and was stopped",
      );
      expect(tasksOfSession(pid)).toBe(0);
      expect(stack.logs.some((line) => line.includes("process limit is watched by the runner only"))).toBe(
        true,
      );
    } finally {
      await stack.cleanup();
    }
  }, 60_000);
});
