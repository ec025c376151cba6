/**
 * Worktrees belong to their thread. With WORKTREE_BASE unset the default base applies (`mcpgw-worktrees`
 * under the runner's data dir), for the API (lexically: `..`, `/etc`, `/proc/self` → 400
 * thread.worktree_forbidden) and the runner (on disk: a symlink resolving outside the base, or onto
 * another thread's open worktree → the same 400, and the registration is not kept). Under isolation a
 * thread's worktree is `root:<thread gid>` 02770: every child of that thread (each under its own uid,
 * all in the thread's group) reads and writes it; a hostile child of another thread can neither read
 * its `.env` nor write into it. When the thread closes, so does its worktree (`root:root`), and the
 * directory stays that thread's (no other thread may name it) until it is removed. A runner starting
 * closes what a dead one left open to a gid of its pool.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createIsolation, startRunner } from "@mcpgw/runner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  HOSTILE_STDIO,
  type RunnerStack,
  reaches,
  startRunnerStack,
  textOf,
  uniqueName,
} from "./helpers";

const tag = randomBytes(6).toString("hex");
const SECRET = `thread-a-dotenv-${tag}`;
const isRoot = process.getuid?.() === 0;

interface Key {
  id: string;
  key: string;
}

type Outcome = { path: string; ok: boolean; code?: string; content?: string };

describe("runner: a thread's worktree is its own", () => {
  let stack: RunnerStack;
  const hostile = uniqueName("hostile");
  const peer = uniqueName("peer");
  let keyA: Key;
  let keyB: Key;
  let worktreeA: string;
  let worktreeB: string;
  const threadA = `a-${tag}`;
  const threadB = `b-${tag}`;

  /** Requests as `key`. */
  const as = (key: Key) => stack.callAs(key.key);

  const start = (key: Key, thread: string, server: string, worktreeRoot: string) =>
    as(key)("POST", `/v1/threads/${thread}/servers/${server}`, { worktreeRoot });

  /** Calls a tool of the hostile fixture in `thread` as `key`; its JSON answer. */
  async function tool(key: Key, thread: string, name: string, args: Record<string, unknown>) {
    const call = await as(key)("POST", `/v1/tools/${name}/call`, { arguments: args, thread });
    expect(call.status, name).toBe(200);
    return JSON.parse(textOf(call.body));
  }

  beforeAll(async () => {
    stack = await startRunnerStack();
    const [hostileId, peerId] = await Promise.all([
      createServer(stack, {
        name: hostile,
        command: process.execPath,
        args: [HOSTILE_STDIO],
        scope: "thread",
      }),
      createServer(stack, { name: peer, command: process.execPath, args: [HOSTILE_STDIO], scope: "thread" }),
    ]);
    await Promise.all([reaches(stack, hostileId, "connected"), reaches(stack, peerId, "connected")]);
    const key = async (name: string) => (await stack.call("POST", "/v1/keys", { name })).body as Key;
    [keyA, keyB] = await Promise.all([key("a"), key("b")]);
    worktreeA = stack.worktree(`wt-a-${tag}`);
    worktreeB = stack.worktree(`wt-b-${tag}`);
    // As a checkout would have it: readable by anyone who may enter the directory.
    writeFileSync(join(worktreeA, ".env"), `SECRET=${SECRET}\n`, { mode: 0o644 });
    for (const [key, thread, server, root] of [
      [keyA, threadA, hostile, worktreeA],
      [keyA, threadA, peer, worktreeA],
      [keyB, threadB, hostile, worktreeB],
    ] as const)
      expect((await start(key, thread, server, root)).status, `${thread} ${server}`).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await stack?.cleanup();
  });

  it("with WORKTREE_BASE unset, the default base (mcpgw-worktrees under the runner's data dir) applies", async () => {
    expect(stack.worktreeBase).toBe(join(stack.tempBase, "mcpgw-worktrees"));
    expect(statSync(stack.worktreeBase).mode & 0o777).toBe(0o711);
    const outside = stack.worktree(`../outside-${tag}`); // made, but not under the base
    for (const root of ["/", "/etc", "/proc/self", outside, `${stack.worktreeBase}/../outside-${tag}`]) {
      const refused = await start(keyA, `x-${tag}`, hostile, root);
      expect(refused.status, root).toBe(400);
      expect(refused.body, root).toMatchObject({ code: "thread.worktree_forbidden" });
    }
    expect((await as(keyA)("GET", `/v1/threads/x-${tag}`)).status).toBe(404);
  });

  it("a symlink under the base that resolves outside it, or onto another thread's worktree: 400, nothing kept", async () => {
    const outsideLink = join(stack.worktreeBase, `outsideLink-${tag}`);
    const alias = join(stack.worktreeBase, `alias-${tag}`);
    symlinkSync("/etc", outsideLink);
    symlinkSync(worktreeA, alias);
    for (const [root, why] of [
      [outsideLink, "outside the worktree base"],
      [alias, "another thread's worktree"],
      [worktreeA, "another thread's worktree"],
    ] as const) {
      const refused = await start(keyB, `s-${tag}`, hostile, root);
      expect(refused.status, root).toBe(400);
      expect(refused.body, root).toMatchObject({ code: "thread.worktree_forbidden" });
      expect(refused.body.detail, root).toContain(why);
    }
    expect((await as(keyB)("GET", `/v1/threads/s-${tag}`)).status).toBe(404);
    expect((await stack.instances()).filter((i) => i.threadId?.endsWith(`s-${tag}`))).toEqual([]);
  });

  it("thread B's child can neither read thread A's .env nor write into A's worktree", async () => {
    const env = join(worktreeA, ".env");
    const planted = join(worktreeA, `planted-${tag}`);
    const read = (await tool(keyB, threadB, `${hostile}__try_read`, {
      paths: [env, worktreeA],
    })) as Outcome[];
    const wrote = (await tool(keyB, threadB, `${hostile}__try_write`, {
      path: planted,
      content: "from b",
    })) as Outcome;
    expect(JSON.stringify(read)).not.toContain(SECRET);
    if (!isRoot) {
      expect(stack.logs.some((line) => line.includes("thread worktrees are not closed"))).toBe(true);
      return;
    }
    expect(read).toEqual([
      { path: env, ok: false, code: "EACCES" },
      { path: worktreeA, ok: false, code: "EACCES" },
    ]);
    expect(wrote).toEqual({ path: planted, ok: false, code: "EACCES" });
    expect(existsSync(planted)).toBe(false);
  });

  it.runIf(isRoot)(
    "thread A's children (each its own uid, both in A's group) read and write A's worktree",
    async () => {
      const [first, second] = await Promise.all(
        [hostile, peer].map((server) => tool(keyA, threadA, `${server}__whoami`, {})),
      );
      expect(first.uid).not.toBe(second.uid);
      expect(first.gid).toBe(second.gid);
      const stat = statSync(worktreeA);
      expect({ uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 }).toEqual({
        uid: 0,
        gid: first.gid,
        mode: 0o2770,
      });
      const [read] = (await tool(keyA, threadA, `${hostile}__try_read`, {
        paths: [join(worktreeA, ".env")],
      })) as Outcome[];
      expect(read?.content).toBe(`SECRET=${SECRET}\n`);
      const shared = join(worktreeA, `from-hostile-${tag}`);
      expect(await tool(keyA, threadA, `${hostile}__try_write`, { path: shared, content: "hello" })).toEqual({
        path: shared,
        ok: true,
      });
      const [back] = (await tool(keyA, threadA, `${peer}__try_read`, { paths: [shared] })) as Outcome[];
      expect(back).toMatchObject({ ok: true, content: "hello" });
      expect(statSync(shared).gid).toBe(first.gid);
    },
  );

  it.runIf(isRoot)(
    "a closed thread's worktree is closed (root:root) and stays its own until the directory goes",
    async () => {
      expect((await as(keyA)("DELETE", `/v1/threads/${threadA}`)).body).toEqual({ stopped: 2, removed: 2 });
      const stat = statSync(worktreeA);
      expect({ uid: stat.uid, gid: stat.gid }).toEqual({ uid: 0, gid: 0 });
      const env = join(worktreeA, ".env");
      const read = (await tool(keyB, threadB, `${hostile}__try_read`, { paths: [env] })) as Outcome[];
      expect(read).toEqual([{ path: env, ok: false, code: "EACCES" }]);
      // What thread A left is never handed to another thread…
      const taken = await start(keyB, `take-${tag}`, hostile, worktreeA);
      expect(taken.status).toBe(400);
      expect(taken.body).toMatchObject({ code: "thread.worktree_forbidden" });
      // …while the same thread may come back to it.
      expect((await start(keyA, threadA, hostile, worktreeA)).status).toBe(201);
      expect((await as(keyA)("DELETE", `/v1/threads/${threadA}`)).body).toEqual({ stopped: 1, removed: 1 });
      // Removed and made anew, the directory is free.
      rmSync(worktreeA, { recursive: true });
      mkdirSync(worktreeA, { mode: 0o755 });
      expect((await start(keyB, `take-${tag}`, hostile, worktreeA)).status).toBe(201);
    },
  );

  it.runIf(isRoot)(
    "a runner starting on the pool closes a worktree a dead runner left open to one of its gids",
    async () => {
      const left = stack.worktree(`left-${tag}`);
      expect((await start(keyA, `left-${tag}`, hostile, left)).status).toBe(201);
      const { gid } = statSync(left);
      expect(gid).not.toBe(0);
      // A runner whose pool is that group's number: to it, the worktree is a dead predecessor's. (A live
      // runner holds that uid's slice, so this one is handed its pool rather than claiming a slice.)
      const next = await startRunner({
        store: stack.store,
        logger: stack.logger,
        token: `t-${tag}`,
        tempBase: stack.tempBase,
        worktreeBase: stack.worktreeBase,
        isolation: createIsolation({ logger: stack.logger, uidBase: gid, uidCount: 1, canSwitchUids: true }),
        uidBase: gid,
        uidCount: 1,
        maxChildren: 1,
      });
      try {
        expect(statSync(left).gid).toBe(0);
        expect(stack.logs.some((line) => line.includes("closed worktrees a dead runner left open"))).toBe(
          true,
        );
      } finally {
        await next.stop();
      }
    },
  );
});
