/**
 * A thread's worktree is checked by the runner before it spawns: a path that does not exist there,
 * is not a directory, or (children under their own uids) cannot be entered by the child's uid is a
 * 400 `thread.worktree_missing` naming the path — never `spawn node ENOENT` — and the refused
 * registration is not kept, so a corrected start succeeds.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type RunnerStack, reaches, startRunnerStack, TINY_STDIO, uniqueName } from "./helpers";

const tag = randomBytes(4).toString("hex");
const isRoot = process.getuid?.() === 0;

describe("runner: thread worktrees are checked before a spawn", () => {
  let stack: RunnerStack;
  let id: string;
  let base: string;

  beforeAll(async () => {
    stack = await startRunnerStack();
    base = realpathSync(stack.worktreeBase);
    id = await createServer(stack, {
      name: uniqueName("wt"),
      command: process.execPath,
      args: [TINY_STDIO],
      scope: "thread",
    });
    await reaches(stack, id, "connected", 20_000);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  async function start(thread: string, worktreeRoot: string) {
    return stack.call("POST", `/v1/threads/${thread}/servers/${id}`, { worktreeRoot });
  }

  function expectRefused(response: { status: number; body: Record<string, unknown> }, path: string) {
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("thread.worktree_missing");
    expect(response.body.detail).toContain(path);
    expect(JSON.stringify(response.body)).not.toMatch(/ENOENT|spawn /);
  }

  it("a worktree that does not exist: 400 naming the path; the thread keeps no registration", async () => {
    const thread = `wt-missing-${tag}`;
    const missing = join(base, "not-there");
    const refused = await start(thread, missing);
    expectRefused(refused, missing);
    expect(refused.body.detail).toBe(`The thread's worktree ${missing} does not exist on the runner.`);
    expect((await stack.call("GET", `/v1/threads/${thread}`)).status).toBe(404);
    expect((await stack.instances()).some((i) => i.threadId === thread)).toBe(false);

    // Corrected, the same thread starts.
    mkdirSync(missing, { mode: 0o755 });
    const started = await start(thread, missing);
    expect(started.status).toBe(201);
    expect(started.body.worktreeRoot).toBe(missing);
    expect(typeof started.body.pid).toBe("number");
  });

  it("a worktree that is a file: 400 saying so", async () => {
    const file = join(base, "a-file");
    writeFileSync(file, "not a directory\n");
    const refused = await start(`wt-file-${tag}`, file);
    expectRefused(refused, file);
    expect(refused.body.detail).toBe(`The thread's worktree ${file} is not a directory.`);
  });

  it.runIf(isRoot)(
    "a worktree the child's uid cannot enter: 400 naming the directory in the way",
    async () => {
      const closed = join(base, "closed");
      mkdirSync(join(closed, "inner"), { recursive: true });
      chmodSync(closed, 0o700); // root's, and not searchable by anyone else
      const inner = join(closed, "inner");
      const refused = await start(`wt-closed-${tag}`, inner);
      expectRefused(refused, inner);
      expect(refused.body.detail).toMatch(/cannot be reached by its server's user \(uid \d+\)/);
      expect(refused.body.detail).toContain(`${closed} is not searchable by it`);
    },
  );

  it("a registered thread whose worktree went away: its next start says the same, not ENOENT", async () => {
    const thread = `wt-gone-${tag}`;
    const dir = join(base, "gone");
    mkdirSync(dir, { mode: 0o755 });
    expect((await start(thread, dir)).status).toBe(201);
    expect((await stack.call("DELETE", `/v1/threads/${thread}`)).status).toBe(200);
    expect((await start(thread, dir)).status).toBe(201);
    // The child ends (the thread's instance closed by the runner alone), then the worktree goes.
    const closed = await stack.runnerCall("DELETE", `/threads/${thread}`);
    expect(closed.body.stopped).toBe(1);
    rmSync(dir, { recursive: true });
    const again = await stack.call("POST", `/v1/threads/${thread}/servers/${id}`, { worktreeRoot: dir });
    expectRefused(again, dir);
  });
});
