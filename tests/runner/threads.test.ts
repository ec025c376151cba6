/**
 * Thread scope with the published `@modelcontextprotocol/server-filesystem` as a thread-scoped server
 * whose only argument is `{{worktree_root}}`: each thread gets its own child rooted in its own worktree
 * under WORKTREE_BASE (normalised: `/./` and trailing slashes dropped before it is stored or spawned);
 * starting is idempotent (the live child is kept); a thread's tool list is the project's tools plus its
 * instances' tools; `DELETE /v1/threads/{id}` ends that thread's children and nothing else.
 */
import { randomBytes } from "node:crypto";
import { readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  filesystemEntry,
  isAlive,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

const tag = randomBytes(4).toString("hex");

describe("runner: thread-scoped server-filesystem", () => {
  let stack: RunnerStack;
  let fsId: string;
  const fs = uniqueName("fs");
  const project = uniqueName("proj");
  const worktrees: Record<"a" | "b", string> = { a: "", b: "" };
  const threadA = `thread-a-${tag}`;
  const threadB = `thread-b-${tag}`;
  const pids: Record<"a" | "b", number> = { a: 0, b: 0 };

  beforeAll(async () => {
    stack = await startRunnerStack();
    for (const side of ["a", "b"] as const) {
      // The server resolves symlinks in its roots; compare against the real path.
      worktrees[side] = realpathSync(stack.worktree(`worktree-${side}`));
      writeFileSync(join(worktrees[side], `only-in-${side}.txt`), `this is ${side}\n`);
    }
    const [id, projectId] = await Promise.all([
      createServer(stack, {
        name: fs,
        command: process.execPath,
        args: [filesystemEntry(), "{{worktree_root}}"],
        scope: "thread",
      }),
      createServer(stack, { name: project, command: process.execPath, args: [TINY_STDIO] }),
    ]);
    fsId = id;
    await Promise.all([
      reaches(stack, fsId, "connected", 30_000),
      reaches(stack, projectId, "connected", 30_000),
    ]);
  });

  afterAll(async () => {
    await stack?.cleanup();
  });

  it("starts one child per thread, each rooted in its own worktree; a second POST keeps the child", async () => {
    for (const [side, thread] of [
      ["a", threadA],
      ["b", threadB],
    ] as const) {
      // Thread b names its worktree unnormalised: it is stored, returned and spawned normalised.
      const given = side === "a" ? worktrees.a : `${worktrees.b}/.//`;
      const first = await stack.call("POST", `/v1/threads/${thread}/servers/${fsId}`, {
        worktreeRoot: given,
      });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        threadId: thread,
        serverId: fsId,
        server: fs,
        worktreeRoot: worktrees[side],
      });
      expect(typeof first.body.pid).toBe("number");
      pids[side] = first.body.pid;
      const again = await stack.call("POST", `/v1/threads/${thread}/servers/${fs}`, {
        worktreeRoot: worktrees[side],
      });
      expect(again.status).toBe(200);
      expect(again.body.pid).toBe(pids[side]);
      // Started in its worktree, with the worktree as its argument.
      expect(readlinkSync(`/proc/${pids[side]}/cwd`)).toBe(worktrees[side]);
    }
    expect(pids.a).not.toBe(pids.b);
    const live = await stack.instances();
    expect(live.filter((i) => i.serverId === fsId && i.threadId !== null)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ threadId: threadA, pid: pids.a, restarts: 0 }),
        expect.objectContaining({ threadId: threadB, pid: pids.b, restarts: 0 }),
      ]),
    );
  });

  it("each thread sees its own directory", async () => {
    for (const [side, thread, other] of [
      ["a", threadA, "b"],
      ["b", threadB, "a"],
    ] as const) {
      const allowed = await stack.callTool(`${fs}__list_allowed_directories`, {}, thread);
      expect(allowed.status).toBe(200);
      expect(textOf(allowed.body)).toBe(`Allowed directories:\n${worktrees[side]}`);

      const listing = await stack.callTool(`${fs}__list_directory`, { path: worktrees[side] }, thread);
      expect(listing.status).toBe(200);
      expect(textOf(listing.body)).toBe(`[FILE] only-in-${side}.txt`);

      const foreign = await stack.callTool(`${fs}__list_directory`, { path: worktrees[other] }, thread);
      expect(foreign.status).toBe(200);
      expect(foreign.body.isError).toBe(true);
      expect(textOf(foreign.body)).toMatch(/Access denied/);
    }
  });

  it("a thread's tools are the project tools plus its instances' tools", async () => {
    const names = async (path: string) => {
      const response = await stack.call("GET", path);
      expect(response.status).toBe(200);
      return (response.body.tools as Array<{ name: string }>).map((tool) => tool.name);
    };
    const inThread = await names(`/v1/threads/${threadA}/tools`);
    expect(inThread).toEqual(
      expect.arrayContaining([
        `${fs}__list_directory`,
        `${fs}__list_allowed_directories`,
        `${fs}__read_text_file`,
        `${project}__ping`,
      ]),
    );
    expect(inThread).toEqual([...inThread].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    // A thread without instances, and the project list, have the project tools only.
    for (const other of [await names(`/v1/threads/thread-none-${tag}/tools`), await names("/v1/tools")]) {
      expect(other).toContain(`${project}__ping`);
      expect(other.filter((name) => name.startsWith(`${fs}__`))).toEqual([]);
    }
  });

  it("DELETE /v1/threads/{id} ends that thread's children only", async () => {
    const closed = await stack.call("DELETE", `/v1/threads/${threadA}`);
    expect(closed).toEqual({ status: 200, body: { stopped: 1, removed: 1 } });
    await waitFor(
      async () => isAlive(pids.a),
      (alive) => !alive,
      { timeoutMs: 5_000 },
    );
    expect(isAlive(pids.b)).toBe(true);
    const live = await stack.instances();
    expect(live.some((i) => i.threadId === threadA)).toBe(false);
    expect(live.some((i) => i.threadId === threadB && i.pid === pids.b)).toBe(true);
    // The thread is gone: its tools and its instance.
    const tools = await stack.call("GET", `/v1/threads/${threadA}/tools`);
    expect((tools.body.tools as Array<{ name: string }>).some((t) => t.name.startsWith(`${fs}__`))).toBe(
      false,
    );
    const call = await stack.callTool(`${fs}__list_allowed_directories`, {}, threadA);
    expect(call.status).not.toBe(200);
    expect((await stack.instances()).some((i) => i.threadId === threadA)).toBe(false);

    const closedB = await stack.call("DELETE", `/v1/threads/${threadB}`);
    expect(closedB).toEqual({ status: 200, body: { stopped: 1, removed: 1 } });
    await waitFor(
      async () => isAlive(pids.b),
      (alive) => !alive,
      { timeoutMs: 5_000 },
    );
    // Closing a closed thread is fine.
    expect(await stack.call("DELETE", `/v1/threads/${threadB}`)).toEqual({
      status: 200,
      body: { stopped: 0, removed: 0 },
    });
  });
});
