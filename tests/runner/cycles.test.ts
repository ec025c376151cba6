/**
 * 200 spawn/kill cycles leave nothing behind: no child, no grandchild (each child starts a `sleep` in its
 * process group, like an `npx` wrapper's server), no temp dir or secret file. Cycles run 10 at a time and
 * mix the three ways a child ends: a thread closed through the runner's HTTP route, a thread closed on
 * the instance manager, and an unexpected SIGKILL of the child.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  descendants,
  inGroups,
  type RunnerStack,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
  waitFor,
  withMarker,
} from "./helpers";

const CYCLES = 200;
const PARALLEL = 10;
/** A `sleep` duration no other process on the machine will have: the grandchildren's marker. */
const MARKER = `86399.${randomBytes(3).readUIntBE(0, 3)}`;

describe("runner: spawn/kill cycles", () => {
  let stack: RunnerStack;
  let id: string;

  beforeAll(async () => {
    stack = await startRunnerStack();
    const secret = `cycle-${randomBytes(4).toString("hex")}`;
    await stack.call("PUT", `/v1/secrets/${secret}`, { values: { TOKEN: "cycle-secret-value" } });
    // Disabled: the worker never probes it, so every child in this test is one of the cycles'.
    id = await createServer(stack, {
      name: uniqueName("cycle"),
      command: process.execPath,
      args: [TINY_STDIO, "--grandchild", MARKER],
      env: { LEAK_FILE: "{{secret_file}}" },
      secretRef: secret,
      scope: "thread",
      enabled: false,
    });
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  it(`${CYCLES} cycles leave zero processes and zero temp files`, async () => {
    const manager = stack.runner?.instances;
    if (!manager) throw new Error("no runner");
    const threads = Array.from({ length: CYCLES }, (_, i) => `cycle-${i}`);
    for (let i = 0; i < threads.length; i += 25) {
      await Promise.all(
        threads.slice(i, i + 25).map((threadId) =>
          stack.store.threads.register({
            threadId,
            serverId: id,
            worktreeRoot: stack.worktree(threadId),
            owner: "admin",
          }),
        ),
      );
    }
    const pids: number[] = [];
    let peak = 0;

    async function cycle(index: number): Promise<void> {
      const thread = threads[index] as string;
      const way = index % 3;
      if (way === 0) {
        const started = await stack.runnerCall("POST", `/threads/${thread}/servers/${id}`);
        expect(started.status).toBe(200);
        pids.push(started.body.pid);
        expect((await stack.runnerCall("DELETE", `/threads/${thread}`)).body).toEqual({ stopped: 1 });
      } else if (way === 1) {
        const instance = await manager?.acquire(id, thread);
        pids.push(instance?.transport.pid as number);
        expect(await manager?.stopThread(thread)).toBe(1);
      } else {
        const instance = await manager?.acquire(id, thread);
        if (!instance) throw new Error("no instance");
        pids.push(instance.transport.pid as number);
        process.kill(instance.transport.pid as number, "SIGKILL");
        await instance.transport.whenExited();
      }
    }

    const sampler = setInterval(() => {
      peak = Math.max(peak, descendants().length);
    }, 20);
    const started = performance.now();
    try {
      for (let i = 0; i < CYCLES; i += PARALLEL)
        await Promise.all(Array.from({ length: Math.min(PARALLEL, CYCLES - i) }, (_, k) => cycle(i + k)));
    } finally {
      clearInterval(sampler);
    }
    const elapsed = performance.now() - started;

    expect(new Set(pids).size).toBe(CYCLES);
    // Nothing left: no descendant of this process, nothing in the children's process groups (orphans
    // reparented to init included), no grandchild `sleep`, no temp dir; the runner holds no instance.
    const leftovers = await waitFor(
      async () => ({
        descendants: descendants(),
        groups: inGroups(pids),
        sleepers: withMarker(MARKER),
        temp: readdirSync(stack.tempRoot),
        instances: manager.size,
      }),
      (left) =>
        left.descendants.length === 0 &&
        left.groups.length === 0 &&
        left.sleepers.length === 0 &&
        left.temp.length === 0 &&
        left.instances === 0,
      { timeoutMs: 10_000 },
    );
    expect(leftovers).toEqual({ descendants: [], groups: [], sleepers: [], temp: [], instances: 0 });
    expect(await stack.instances()).toEqual([]);
    console.log(
      `[runner] ${CYCLES} spawn/kill cycles (${PARALLEL} at a time, each child with a grandchild) in ` +
        `${Math.round(elapsed)} ms (${(elapsed / CYCLES).toFixed(1)} ms/cycle); ` +
        `peak ${peak} live descendants during the run; 0 processes, 0 temp entries left`,
    );
  }, 90_000);

  it("runner shutdown kills every child's process group and removes every temp dir", async () => {
    const own = await startRunnerStack();
    try {
      const shutdownId = await createServer(own, {
        name: uniqueName("shutdown"),
        command: process.execPath,
        args: [TINY_STDIO, "--grandchild", MARKER],
        scope: "thread",
        enabled: false,
      });
      const manager = own.runner?.instances;
      if (!manager) throw new Error("no runner");
      const pids: number[] = [];
      for (const threadId of ["s1", "s2", "s3", "s4", "s5"]) {
        await own.store.threads.register({
          threadId,
          serverId: shutdownId,
          worktreeRoot: own.worktree(threadId),
          owner: "admin",
        });
        pids.push((await manager.acquire(shutdownId, threadId)).transport.pid as number);
      }
      expect(withMarker(MARKER)).toHaveLength(10); // 5 children (the marker is in their argv) + 5 sleepers
      await own.runner?.stop();
      expect(inGroups(pids)).toEqual([]);
      expect(withMarker(MARKER)).toEqual([]);
      // Only the worktree base stays (the threads' worktrees are theirs, not the runner's temp files),
      // every worktree in it closed again.
      expect(readdirSync(own.tempBase)).toEqual(["mcpgw-worktrees"]);
      for (const threadId of ["s1", "s2", "s3", "s4", "s5"])
        expect(statSync(own.worktree(threadId)).gid, threadId).toBe(
          own.runner?.isolated ? 0 : process.getgid?.(),
        );
    } finally {
      await own.cleanup();
    }
  });
});
