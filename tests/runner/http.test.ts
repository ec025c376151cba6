/**
 * The runner's own HTTP surface: `/healthz` needs no token; everything else needs the runner token
 * (missing, wrong, or almost-right tokens are 401 and spawn nothing); `GET /servers` lists live instances
 * (server, thread, pid, uptime, restarts); a config change restarts the child on its next use.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  environ,
  isAlive,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  statusReader,
  TINY_STDIO,
  textOf,
  uniqueName,
  waitFor,
} from "./helpers";

describe("runner: HTTP routes", () => {
  let stack: RunnerStack;
  let id: string;
  let threadServer: string;
  const name = uniqueName("tiny");

  beforeAll(async () => {
    stack = await startRunnerStack();
    [id, threadServer] = await Promise.all([
      createServer(stack, {
        name,
        command: process.execPath,
        args: [TINY_STDIO],
        env: { LEVEL: "1" },
        pinning: "auto",
      }),
      createServer(stack, {
        name: uniqueName("tinythread"),
        command: process.execPath,
        args: [TINY_STDIO],
        scope: "thread",
      }),
    ]);
    await Promise.all([reaches(stack, id, "connected"), reaches(stack, threadServer, "connected")]);
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  it("GET /healthz needs no token", async () => {
    const health = await stack.runnerCall("GET", "/healthz", {});
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true });
    expect(typeof health.body.children).toBe("number");
  });

  it("every other route is 401 without the runner token, and spawns nothing", async () => {
    const token = stack.runner?.token as string;
    const before = await stack.instances();
    await stack.store.threads.register({
      threadId: "t-unauth",
      serverId: threadServer,
      worktreeRoot: stack.worktree("t-unauth"),
      owner: "admin",
    });
    const badHeaders: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong-token" },
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${token.slice(0, -1)}` },
      { authorization: "Bearer " },
      { authorization: token },
      { authorization: `Basic ${Buffer.from(`runner:${token}`).toString("base64")}` },
      { "x-runner-token": token },
    ];
    const routes: Array<[string, string]> = [
      ["GET", "/servers"],
      ["POST", `/servers/${id}/mcp`],
      ["GET", `/servers/${id}/mcp`],
      ["POST", `/servers/${threadServer}/threads/t-unauth/mcp`],
      ["POST", `/threads/t-unauth/servers/${threadServer}`],
      ["DELETE", "/threads/t-unauth"],
      ["GET", "/nowhere"],
    ];
    for (const headers of badHeaders) {
      for (const [method, path] of routes) {
        const response = await stack.runnerCall(method, path, headers);
        expect(response.status, `${method} ${path} with ${JSON.stringify(Object.keys(headers))}`).toBe(401);
        // problem+json from the same renderer as the API's
        expect(response.body).toMatchObject({
          status: 401,
          code: "auth.unauthorized",
          detail: "missing or invalid runner token",
        });
      }
    }
    expect(await stack.instances()).toEqual(
      before.map((instance) => ({ ...instance, uptimeMs: expect.any(Number) })),
    );
    // The right token (scheme case-insensitive) is accepted; an unknown route is then a 404.
    expect((await stack.runnerCall("GET", "/servers", { authorization: `bearer ${token}` })).status).toBe(
      200,
    );
    expect((await stack.runnerCall("GET", "/nowhere")).status).toBe(404);
  });

  it("GET /servers lists live instances: server, thread, pid, uptime, restarts, requests in flight", async () => {
    const pid = await pidOf(stack, id);
    const first = (await stack.instances()).find((i) => i.serverId === id);
    expect(first).toEqual({
      serverId: id,
      threadId: null,
      caller: null,
      pid,
      uptimeMs: expect.any(Number),
      restarts: 0,
      inFlight: 0,
    });
    expect(isAlive(pid)).toBe(true);
    const started = await stack.runnerCall("POST", `/threads/t-list/servers/${threadServer}`);
    expect(started.status).toBe(404); // not registered for that thread: nothing to start
    await stack.store.threads.register({
      threadId: "t-list",
      serverId: threadServer,
      worktreeRoot: stack.worktree("t-list"),
      owner: "admin",
    });
    const thread = await stack.runnerCall("POST", `/threads/t-list/servers/${threadServer}`);
    expect(thread.status).toBe(200);
    expect(thread.body).toEqual({ serverId: threadServer, threadId: "t-list", pid: expect.any(Number) });
    const later = await stack.instances();
    expect(later).toEqual(
      expect.arrayContaining([
        {
          serverId: threadServer,
          threadId: "t-list",
          caller: null,
          pid: thread.body.pid,
          uptimeMs: expect.any(Number),
          restarts: 0,
          inFlight: 0,
        },
      ]),
    );
    expect((later.find((i) => i.serverId === id)?.uptimeMs ?? 0) >= (first?.uptimeMs ?? 0)).toBe(true);
    expect((await stack.runnerCall("DELETE", "/threads/t-list")).body).toEqual({ stopped: 1 });
    expect(isAlive(thread.body.pid)).toBe(false);
  });

  it("a config change (PATCH env) restarts the child on its next use", async () => {
    const pid = await pidOf(stack, id);
    expect(environ(pid).LEVEL).toBe("1");
    const before = await statusReader(stack, id)();
    const patched = await stack.call("PATCH", `/v1/servers/${id}`, { env: { LEVEL: "2" } });
    expect(patched.status).toBe(200);
    // The worker's probe of the new generation is the next use.
    await waitFor(
      statusReader(stack, id),
      (s) => s.state === "connected" && s.lastSuccessfulConnectionAt !== before.lastSuccessfulConnectionAt,
    );
    const instance = (await stack.instances()).find((i) => i.serverId === id);
    expect(instance?.pid).not.toBe(pid);
    expect(instance?.restarts).toBe(1);
    // The worker writes `connected` first, then retires the older child: it ends soon after, not before.
    await waitFor(
      async () => isAlive(pid),
      (alive) => !alive,
      { timeoutMs: 10_000 },
    );
    const newPid = instance?.pid as number;
    expect(environ(newPid).LEVEL).toBe("2");
    // Calls reach the new child.
    const call = await stack.callTool(`${name}__pid`);
    expect(call.status).toBe(200);
    expect(Number(textOf(call.body))).toBe(newPid);
  });

  it("a config change under steady traffic: the probe of the new config sees the new child", async () => {
    let stop = false;
    const traffic = (async () => {
      while (!stop) await stack.callTool(`${name}__ping`);
    })();
    try {
      for (const round of [1, 2, 3]) {
        const before = await statusReader(stack, id)();
        const extra = `extra_${round}`;
        const patched = await stack.call("PATCH", `/v1/servers/${id}`, {
          args: [TINY_STDIO, "--extra-tool", extra],
        });
        expect(patched.status).toBe(200);
        await waitFor(
          statusReader(stack, id),
          (s) =>
            s.state === "connected" && s.lastSuccessfulConnectionAt !== before.lastSuccessfulConnectionAt,
        );
        const tools = await stack.call("GET", `/v1/servers/${id}/tools`);
        expect(
          (tools.body.tools as Array<{ name: string }>).map((tool) => tool.name),
          `round ${round}`,
        ).toContain(extra);
      }
    } finally {
      stop = true;
      await traffic;
    }
  });
});
