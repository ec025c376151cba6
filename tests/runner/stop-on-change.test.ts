/**
 * Children follow their server's config: deleting, disabling or reconfiguring a stdio server stops its
 * children — project and thread instances — within 5 s, and their secret files and temp dirs are gone
 * by then (not when the idle reaper comes, 10 minutes later).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  environ,
  isAlive,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
  waitFor,
} from "./helpers";

const tag = randomBytes(4).toString("hex");

describe("runner: a server's change stops its children within 5 s", () => {
  let stack: RunnerStack;

  beforeAll(async () => {
    stack = await startRunnerStack();
    const put = await stack.call("PUT", `/v1/secrets/stop-${tag}`, { values: { TOKEN: "stop-secret" } });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /** A connected project server with a secret file, its live child, and that child's files. */
  async function running(scope: "project" | "thread" = "project") {
    const id = await createServer(stack, {
      name: uniqueName(`stop-${scope}`),
      command: process.execPath,
      args: [TINY_STDIO],
      env: { LEAK_FILE: "{{secret_file}}" },
      secretRef: `stop-${tag}`,
      scope,
    });
    await reaches(stack, id, "connected");
    const thread = scope === "thread" ? `t-${tag}-${Math.random().toString(36).slice(2, 6)}` : null;
    if (thread) {
      const started = await stack.call("POST", `/v1/threads/${thread}/servers/${id}`, {
        worktreeRoot: stack.worktree(thread),
      });
      expect(started.status).toBe(201);
    }
    const pid = await pidOf(stack, id, thread);
    const secretFile = environ(pid).LEAK_FILE as string;
    expect(existsSync(secretFile)).toBe(true);
    return { id, pid, secretFile, home: dirname(secretFile) };
  }

  async function expectGoneWithin5s(child: { pid: number; secretFile: string; home: string }, from: number) {
    await waitFor(
      async () => isAlive(child.pid) || existsSync(child.secretFile) || existsSync(child.home),
      (present) => !present,
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(Date.now() - from).toBeLessThan(5_000);
  }

  it("delete → the child, its secret file and its HOME are gone", async () => {
    const child = await running();
    const from = Date.now();

    expect((await stack.call("DELETE", `/v1/servers/${child.id}`)).status).toBe(204);

    await expectGoneWithin5s(child, from);
  });

  it("disable → the child, its secret file and its HOME are gone; nothing respawns it", async () => {
    const child = await running();
    const from = Date.now();

    expect((await stack.call("PATCH", `/v1/servers/${child.id}`, { enabled: false })).status).toBe(200);

    await expectGoneWithin5s(child, from);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await stack.instances()).filter((i) => i.serverId === child.id)).toEqual([]);
  });

  it("reconfigure → the old child and its files are gone; the new config gets a new child", async () => {
    const child = await running();
    const from = Date.now();

    expect(
      (
        await stack.call("PATCH", `/v1/servers/${child.id}`, {
          env: { LEAK_FILE: "{{secret_file}}", V: "2" },
        })
      ).status,
    ).toBe(200);

    await expectGoneWithin5s(child, from);
    await reaches(stack, child.id, "connected");
    const newPid = await pidOf(stack, child.id);
    expect(newPid).not.toBe(child.pid);
    expect(environ(newPid).V).toBe("2");
  });

  it("a thread instance goes too when its server is disabled", async () => {
    const child = await running("thread");
    const from = Date.now();

    expect((await stack.call("PATCH", `/v1/servers/${child.id}`, { enabled: false })).status).toBe(200);

    await expectGoneWithin5s(child, from);
  });

  it.each([
    ["deleted", "DELETE", undefined, 404, "server.not_found"],
    ["disabled", "PATCH", { enabled: false }, 409, "server.unavailable"],
  ] as const)(
    "a call in flight when its server is %s is told so, not 502",
    async (what, method, body, status, code) => {
      const child = await running();
      const call = stack.callTool(`${(await stack.call("GET", `/v1/servers/${child.id}`)).body.name}__slow`, {
        ms: 4_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 300)); // the call is with the child
      expect((await stack.call(method, `/v1/servers/${child.id}`, body)).status).toBeLessThan(300);
      const answered = await call;
      expect({ status: answered.status, code: answered.body?.code }).toEqual({ status, code });
      expect(answered.body.detail).toContain(`${what} during the call`);
    },
  );
});
