/**
 * Idle reaping and the cap on live children. Idle instances are stopped after `idleMs` (not a failure:
 * the server stays connected and the next use spawns again); an instance in use is never reaped. At
 * `maxChildren`, the least recently used idle instance makes way; with none idle, a spawn is refused.
 */
import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  cmdline,
  createServer,
  descendants,
  isAlive,
  pidOf,
  type RunnerStack,
  reaches,
  removeBundle,
  startRunnerStack,
  statusReader,
  stdioUpstream,
  TINY_STDIO,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

describe("runner: limits", () => {
  let stack: RunnerStack | undefined;

  afterEach(async () => {
    await stack?.cleanup();
    stack = undefined;
    removeBundle();
  });

  it("reaps idle instances after idleMs; the server stays connected and respawns on next use", async () => {
    stack = await startRunnerStack({ idleMs: 600 });
    const name = uniqueName("idle");
    const id = await createServer(stack, { name, command: process.execPath, args: [TINY_STDIO] });
    await reaches(stack, id, "connected");
    const pid = await pidOf(stack, id);
    const s = stack;
    // Reaping ends the child, then removes its temp dir: wait for both.
    await waitFor(
      async () => ({ live: (await s.instances()).length, temp: readdirSync(s.tempRoot).length }),
      ({ live, temp }) => live === 0 && temp === 0,
      { timeoutMs: 5_000 },
    );
    expect(isAlive(pid)).toBe(false);
    expect(s.logs.some((line) => line.includes('"child stopping"') && line.includes('"why":"idle"'))).toBe(
      true,
    );
    // Reaping is not a death: no failure recorded, no retry.
    expect((await statusReader(s, id)()).state).toBe("connected");
    // The next use spawns again.
    const call = await s.callTool(`${name}__pid`);
    expect(call.status).toBe(200);
    const again = Number(textOf(call.body));
    expect(again).not.toBe(pid);
    expect(isAlive(again)).toBe(true);
  });

  it("never reaps an instance that is in use", async () => {
    const entry = await stdioUpstream();
    stack = await startRunnerStack({ idleMs: 300 });
    const s = stack;
    const name = uniqueName("busy");
    const id = await createServer(s, { name, command: process.execPath, args: [entry] });
    await reaches(s, id, "connected");
    // A 3 s call outlives many reaper passes (every 250 ms, idle after 300 ms). The probe's child may
    // be reaped before the call reaches it (it was idle); the child that serves the call is the one
    // seen with the call in flight, and nothing is reaped from then on.
    const slow = s.callTool(`${name}__slow`, { ms: 3_000 });
    const serving = await waitFor(
      async () => (await s.instances()).find((i) => i.serverId === id && i.inFlight > 0),
      (instance) => instance !== undefined,
      { timeoutMs: 20_000 },
    );
    const reapedBefore = s.logs.filter((line) => line.includes('"why":"idle"')).length;
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.body.text).toBe("done");
    expect(s.logs.filter((line) => line.includes('"why":"idle"'))).toHaveLength(reapedBefore);
    expect(isAlive(serving?.pid as number)).toBe(true);
  });

  it("at maxChildren the least recently used idle instance makes way; with none idle, spawning is refused", async () => {
    stack = await startRunnerStack({ maxChildren: 2, idleMs: 60_000 });
    const s = stack;
    const id = await createServer(s, {
      name: uniqueName("capped"),
      command: process.execPath,
      args: [TINY_STDIO],
      scope: "thread",
    });
    await reaches(s, id, "connected"); // the worker's probe started one instance (no thread)
    const probePid = await pidOf(s, id, null);
    const start = (thread: string) =>
      s.call("POST", `/v1/threads/${thread}/servers/${id}`, { worktreeRoot: s.worktree(thread) });

    const t1 = await start("t1");
    expect(t1.status).toBe(201);
    expect((await s.instances()).length).toBe(2);
    const t2 = await start("t2"); // evicts the probe's instance, the least recently used
    expect(t2.status).toBe(201);
    expect(isAlive(probePid)).toBe(false);
    expect((await s.instances()).map((i) => i.threadId).sort()).toEqual(["t1", "t2"]);
    const t3 = await start("t3"); // evicts t1
    expect(t3.status).toBe(201);
    expect(isAlive(t1.body.pid)).toBe(false);
    expect((await s.instances()).map((i) => i.threadId).sort()).toEqual(["t2", "t3"]);

    // Both live instances in use: a third is refused, and nothing is evicted.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const manager = s.runner?.instances;
    if (!manager) throw new Error("no runner");
    const holds = ["t2", "t3"].map((thread) => manager.use(id, thread, () => gate));
    const direct = await s.runnerCall("POST", `/threads/t1/servers/${id}`);
    expect(direct).toMatchObject({
      status: 409,
      body: { status: 409, code: "server.unavailable", detail: "The runner is at its limit of 2 children." },
    });
    // Through the admin API the refusal keeps the runner's words (as an upstream error).
    const refused = await start("t1");
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(refused.body)).toMatch(/limit of 2 children/);
    expect((await s.instances()).map((i) => i.threadId).sort()).toEqual(["t2", "t3"]);
    release();
    await Promise.all(holds);
    expect((await start("t1")).status).toBe(200); // registered already; now it starts, evicting t2
    expect((await s.instances()).map((i) => i.threadId).sort()).toEqual(["t1", "t3"]);
  });

  it("concurrent spawns never take the live children over maxChildren", async () => {
    stack = await startRunnerStack({ maxChildren: 2, idleMs: 60_000 });
    const s = stack;
    const id = await createServer(s, {
      name: uniqueName("burst"),
      command: process.execPath,
      args: [TINY_STDIO],
      scope: "thread",
    });
    await reaches(s, id, "connected");
    const threads = ["b1", "b2", "b3", "b4", "b5", "b6"];
    for (const thread of threads)
      await s.store.threads.register({
        threadId: thread,
        serverId: id,
        worktreeRoot: s.worktree(thread),
        owner: "admin",
      });
    const manager = s.runner?.instances;
    if (!manager) throw new Error("no runner");
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, descendants().filter((pid) => isFixture(pid)).length);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const results = await Promise.allSettled(threads.map((thread) => manager.acquire(id, thread)));
    sampling = false;
    await sampler;
    const live = descendants().filter((pid) => isFixture(pid));
    console.log(
      `[runner] 6 concurrent spawns at maxChildren=2: ${results.filter((r) => r.status === "fulfilled").length} started, ` +
        `at most ${most} children alive at once, ${live.length} alive after`,
    );
    for (const result of results)
      if (result.status === "rejected") expect(String(result.reason)).toMatch(/limit of 2 children/);
    expect(live.length).toBeLessThanOrEqual(2);
    expect(manager.size).toBeLessThanOrEqual(2);
    expect(most).toBeLessThanOrEqual(2);
  });
});

function isFixture(pid: number): boolean {
  try {
    return cmdline(pid).some((arg) => arg.endsWith("tiny-stdio.mjs"));
  } catch {
    return false;
  }
}
