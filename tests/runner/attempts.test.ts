/**
 * Children end with their attempt. A child that does not answer `initialize` before the probe that
 * started it gives up is killed (its process group, HOME and secret file with it) and the next attempt
 * spawns a new one; a connected child that stops answering (SIGSTOP) is killed once a call or probe
 * times out and it then fails the runner's ping, and replaced on the next attempt; a call that is
 * merely slow (the child still answers pings) kills nothing. A package runner's cold start may outlive
 * its attempt while it fetches, not once the server it launched fails to answer. A runner stop does not
 * wait for a start.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  cmdline,
  createServer,
  environ,
  isAlive,
  pidOf,
  procStat,
  type RunnerStack,
  reaches,
  startRunnerStack,
  statusReader,
  TINY_STDIO,
  textOf,
  uniqueName,
  waitFor,
  withMarker,
} from "./helpers";

const tag = randomBytes(4).toString("hex");

/** A command-line marker no other process has. */
function marker(): string {
  return `--marker=${tag}-${randomBytes(3).toString("hex")}`;
}

/** The one live process whose command line carries `mark`. */
async function childWith(mark: string, not?: number): Promise<number> {
  const [pid] = await waitFor(
    async () => withMarker(mark).filter((p) => p !== not),
    (pids) => pids.length === 1,
    { timeoutMs: 20_000 },
  );
  return pid as number;
}

describe("runner: children end with their attempt", () => {
  let stack: RunnerStack;
  /** Processes a test stopped: continued (and so killable by SIGTERM) whatever happens. */
  const stopped: number[] = [];

  beforeAll(async () => {
    // A probe gives up after 2 s (+1 s grace) and retries 1 s later; the runner's own start timeout
    // stays its 60 s default, so only the probe giving up can end a start that early.
    stack = await startRunnerStack(
      { pingTimeoutMs: 1_000 },
      { deadlineMs: 2_000, graceMs: 1_000, retryDelaySeconds: 1 },
    );
    const put = await stack.call("PUT", `/v1/secrets/attempts-${tag}`, { values: { TOKEN: "t" } });
    expect(put.status).toBe(200);
  });
  afterEach(() => {
    for (const pid of stopped.splice(0)) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /**
   * Waits for the server to fail `not_responding`, then for `left` to turn false within `withinMs`;
   * answers how long that took after the failure.
   */
  async function failsThenGone(id: string, left: () => boolean, withinMs: number): Promise<number> {
    const failed = await reaches(stack, id, "failed", 10_000);
    expect(failed.reason).toBe("not_responding");
    const failedAt = Date.now();
    await waitFor(
      async () => left(),
      (still) => !still,
      { timeoutMs: withinMs, intervalMs: 50 },
    );
    return Date.now() - failedAt;
  }

  it("a child that hangs on initialize is killed when its probe gives up, files and all, and replaced on the next attempt", async () => {
    const mark = marker();
    const id = await createServer(stack, {
      name: uniqueName("hang-init"),
      command: process.execPath,
      args: [TINY_STDIO, "--hang-at-initialize", mark],
      env: { LEAK_FILE: "{{secret_file}}" },
      secretRef: `attempts-${tag}`,
    });
    const first = await childWith(mark);
    const secretFile = environ(first).LEAK_FILE as string;
    expect(existsSync(secretFile)).toBe(true);

    const gone = await failsThenGone(id, () => isAlive(first) || existsSync(secretFile), 3_000);
    console.log(`[runner] hung start: child ${first} gone ${gone} ms after the failure`);

    // The retry spawns a new child (killed in turn when that attempt fails).
    const second = await childWith(mark, first);
    expect(second).not.toBe(first);
    expect(await stack.call("DELETE", `/v1/servers/${id}`)).toMatchObject({ status: 204 });
    await waitFor(
      async () => withMarker(mark).length,
      (n) => n === 0,
      { timeoutMs: 5_000 },
    );
  }, 40_000);

  it("a connected child that stops answering is killed after the call that timed out, and replaced", async () => {
    const name = uniqueName("sigstop");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO],
      timeoutSeconds: 1,
    });
    await reaches(stack, id, "connected");
    const pid = await pidOf(stack, id);
    process.kill(pid, "SIGSTOP");
    stopped.push(pid);
    await waitFor(
      async () => procStat(pid)?.state,
      (state) => state === "T",
      { timeoutMs: 2_000, intervalMs: 20 },
    );

    const call = await stack.callTool(`${name}__ping`);
    expect(call.status).toBe(504);
    await waitFor(
      async () => isAlive(pid),
      (alive) => !alive,
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(stack.logs.some((line) => line.includes('"child not answering"') && line.includes(id))).toBe(true);

    // The gateway marked the server failed; its retry (15 s) spawns a new child, connected again.
    expect((await statusReader(stack, id)()).reason).toBe("not_responding");
    await waitFor(
      async () => (await stack.instances()).find((i) => i.serverId === id)?.pid,
      (next) => next !== undefined && next !== null && next !== pid,
      { timeoutMs: 25_000 },
    );
    await reaches(stack, id, "connected", 10_000);
    const again = await stack.callTool(`${name}__ping`);
    expect(again.status).toBe(200);
    expect(textOf(again.body)).toBe("pong");
  }, 50_000);

  it("a probe of a stopped child that times out gets it killed, and the next attempt replaces it", async () => {
    const id = await createServer(stack, {
      name: uniqueName("probe-stop"),
      command: process.execPath,
      args: [TINY_STDIO],
    });
    await reaches(stack, id, "connected");
    const pid = await pidOf(stack, id);
    process.kill(pid, "SIGSTOP");
    stopped.push(pid);

    // The sweep's full probe (a reconnect would start a new generation's child beside it instead).
    expect(await stack.sweep({ maxListingAgeMs: 0 })).toBeGreaterThan(0);
    const failed = await reaches(stack, id, "failed", 10_000);
    expect(failed.reason).toBe("not_responding");
    await waitFor(
      async () => isAlive(pid),
      (alive) => !alive,
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    await reaches(stack, id, "connected", 15_000);
    const next = await pidOf(stack, id);
    expect(next).not.toBe(pid);
  }, 40_000);

  it("a package runner's cold first start outlives the probe that gave up; the next attempt finds it ready", async () => {
    // A stand-in `npx` (by name: a package runner) whose first start takes 3.5 s, as a download
    // would: past the probe's 2 s deadline, short of the runner's 60 s start timeout.
    const dir = mkdtempSync(join(tmpdir(), "mcpgw-fake-npx-"));
    chmodSync(dir, 0o755);
    const npx = join(dir, "npx");
    writeFileSync(
      npx,
      `#!${process.execPath}\nsetTimeout(() => import(${JSON.stringify(TINY_STDIO)}), 3_500);\n`,
      { mode: 0o755 },
    );
    try {
      const mark = marker();
      const id = await createServer(stack, { name: uniqueName("npx"), command: npx, args: [mark] });
      const child = await childWith(mark);
      const failed = await reaches(stack, id, "failed", 10_000);
      expect(failed.reason).toBe("not_responding");
      expect(isAlive(child)).toBe(true); // still starting, with nobody waiting
      await reaches(stack, id, "connected", 10_000);
      expect(await pidOf(stack, id)).toBe(child);
      expect(stack.logs.some((line) => line.includes('"child start abandoned"') && line.includes(id))).toBe(
        false,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it("a package runner whose server never answers is killed with its attempt, group and files, within 5 s", async () => {
    // A stand-in `npx` that launches its server at once (nothing to fetch): a server stuck starting.
    const dir = mkdtempSync(join(tmpdir(), "mcpgw-fake-npx-"));
    chmodSync(dir, 0o755);
    const npx = join(dir, "npx");
    const mark = marker();
    writeFileSync(
      npx,
      `#!${process.execPath}\nrequire("node:child_process").spawn(process.execPath, [${JSON.stringify(TINY_STDIO)}, "--hang-at-initialize", ${JSON.stringify(mark)}], { stdio: "inherit" });\n`,
      { mode: 0o755 },
    );
    try {
      const id = await createServer(stack, { name: uniqueName("npx-hang"), command: npx });
      const server = await childWith(mark);
      const launcher = procStat(server)?.ppid as number;
      expect(cmdline(launcher).some((arg) => arg.endsWith("/npx"))).toBe(true);
      const home = environ(server).HOME as string;
      expect(existsSync(home)).toBe(true);

      const gone = await failsThenGone(
        id,
        () => isAlive(server) || isAlive(launcher) || existsSync(home),
        5_000,
      );
      console.log(`[runner] package runner's hung server gone ${gone} ms after the failure`);
      expect(stack.logs.some((line) => line.includes('"child start abandoned"') && line.includes(id))).toBe(
        true,
      );
      expect(await stack.call("DELETE", `/v1/servers/${id}`)).toMatchObject({ status: 204 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it("a call that is merely slow times out without killing the child (it answers pings)", async () => {
    const name = uniqueName("slow");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [TINY_STDIO],
      timeoutSeconds: 1,
    });
    await reaches(stack, id, "connected");
    const pid = await pidOf(stack, id);

    const slow = await stack.callTool(`${name}__slow`, { ms: 3_000 });
    expect(slow.status).toBe(504);
    // Past the slow answer and a ping bound or two: still the same child, still connected.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(isAlive(pid)).toBe(true);
    expect(await pidOf(stack, id)).toBe(pid);
    expect((await statusReader(stack, id)()).state).toBe("connected");
    const ping = await stack.callTool(`${name}__ping`);
    expect(ping.status).toBe(200);
    expect(stack.logs.some((line) => line.includes('"child not answering"') && line.includes(id))).toBe(
      false,
    );
  }, 30_000);
});

describe("runner: a stop does not wait for a start", () => {
  it("runner.stop() during a hung start returns within a few seconds; the child and its files are gone", async () => {
    const stack = await startRunnerStack();
    try {
      const mark = marker();
      await createServer(stack, {
        name: uniqueName("stop-hang"),
        command: process.execPath,
        args: [TINY_STDIO, "--hang-at-initialize", "--ignore-stdin-eof", mark],
      });
      const pid = await childWith(mark);
      const started = Date.now();
      await stack.runner?.stop();
      const took = Date.now() - started;
      console.log(`[runner] stop during a start took ${took} ms`);
      expect(took).toBeLessThan(5_000);
      expect(isAlive(pid)).toBe(false);
      expect(existsSync(stack.tempRoot)).toBe(false);
      expect(readdirSync(stack.tempBase)).toEqual(["mcpgw-worktrees"]); // the runner's dir is gone; the default worktree base stays
    } finally {
      await stack.cleanup();
    }
  }, 30_000);
});
