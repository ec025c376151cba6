/**
 * A stdio server's edit that reaches its child (env) connects the new generation beside the old one:
 * the old child serves every call until the new one is connected, then it is gone — no call refused,
 * and none cut: a call still on the old child when the new one connects finishes there first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  isAlive,
  type RunnerStack,
  reaches,
  startRunnerStack,
  statusReader,
  TINY_STDIO,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

/** Preloaded through NODE_OPTIONS: the child waits 4 s before it starts. */
const SLOW_START = encodeURIComponent("await new Promise((r) => setTimeout(r, 4000));");

describe("runner: an env edit under steady calls", () => {
  let stack: RunnerStack;

  beforeAll(async () => {
    stack = await startRunnerStack();
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /** A tiny-stdio server (env MARK=before), connected and answering calls: its name, id and child's pid. */
  async function connectedTiny(base: string) {
    const name = uniqueName(base);
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO],
      env: { MARK: "before" },
    });
    await reaches(stack, id, "connected");
    const answered = await waitFor(
      () => stack.callTool(`${name}__pid`),
      (r) => r.status === 200,
      { timeoutMs: 5_000 },
    );
    return { name, id, pid: Number(textOf(answered.body)) };
  }

  it("the old child serves until the new one is connected, then the new one does and the old is gone", async () => {
    const { name, id } = await connectedTiny("env-edit");
    const pids: number[] = [];
    const refusals: unknown[] = [];
    let running = true;
    const loop = (async () => {
      while (running) {
        const answer = await stack.callTool(`${name}__pid`).catch((error: unknown) => ({
          status: 0,
          body: String(error),
        }));
        if (answer.status === 200) pids.push(Number(textOf(answer.body)));
        else refusals.push(answer.body);
      }
    })();
    await waitFor(
      async () => pids.length,
      (n) => n >= 5,
    );
    const oldPid = pids[pids.length - 1] as number;

    // The new child starts slowly (4 s before it reads its stdin): its generation stays `connecting`.
    const edited = await stack.call("PATCH", `/v1/servers/${id}`, {
      env: { MARK: "after", NODE_OPTIONS: `--import=data:text/javascript,${SLOW_START}` },
    });
    expect(edited.status).toBe(200);
    const from = pids.length;
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // past the directory's staleness bound
    expect((await statusReader(stack, id)()).state).toBe("connecting");
    expect(pids.length).toBeGreaterThan(from + 5);
    expect(new Set(pids.slice(from))).toEqual(new Set([oldPid]));
    expect(isAlive(oldPid)).toBe(true);

    await reaches(stack, id, "connected", 15_000);
    const newPid = await waitFor(
      async () => pids[pids.length - 1] as number,
      (pid) => pid !== oldPid,
    );
    await waitFor(
      async () => isAlive(oldPid),
      (alive) => !alive,
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    const after = pids.length;
    await waitFor(
      async () => pids.length,
      (n) => n >= after + 10,
    );
    running = false;
    await loop;
    expect(refusals).toEqual([]);
    expect(new Set(pids.slice(after))).toEqual(new Set([newPid]));
  });

  /**
   * A connected tiny-stdio server with a `slow` call of `ms` on its child, then an env edit whose new
   * generation has connected: the old child's pid and the call still under way.
   */
  async function slowCallAcrossAnEdit(base: string, ms: number) {
    const { name, id, pid: oldPid } = await connectedTiny(base);
    const slow = stack.callTool(`${name}__slow`, { ms });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the call is with the old child
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { env: { MARK: "after" } })).status).toBe(200);
    await reaches(stack, id, "connected", 4_000);
    return { id, oldPid, slow };
  }

  /** Waits (at most 3 s from `from`) until `pid` is gone. */
  async function goneWithin3s(pid: number, from: number) {
    await waitFor(
      async () => isAlive(pid),
      (alive) => !alive,
      { timeoutMs: 3_000, intervalMs: 50 },
    );
    expect(Date.now() - from).toBeLessThan(3_000);
  }

  it("a call in flight on the old child when the new one connects finishes there; the old child goes once it ends", async () => {
    const { oldPid, slow } = await slowCallAcrossAnEdit("env-drain", 5_000);
    expect(isAlive(oldPid)).toBe(true);

    const answered = await slow;
    const endedAt = Date.now();
    expect({ status: answered.status, text: textOf(answered.body) }).toEqual({
      status: 200,
      text: "slow done",
    });
    await goneWithin3s(oldPid, endedAt);
  });

  it("a retired child still finishing a call is stopped at once when its server is disabled", async () => {
    const { id, oldPid, slow } = await slowCallAcrossAnEdit("env-drain-off", 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the old child is retiring, its call on
    expect(isAlive(oldPid)).toBe(true);

    const from = Date.now();
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { enabled: false })).status).toBe(200);
    await goneWithin3s(oldPid, from);
    expect((await slow).status).not.toBe(200);
  });
});
