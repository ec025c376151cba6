/**
 * Data plane — transport failures: an upstream process SIGKILLed during a `slow` call (502
 * upstream.unreachable, status failed/unreachable, healed by the 15 s retry once it is back on the
 * same port, calls work again), a tool past its server's timeout (504 upstream.timeout within ~1 s,
 * server stays connected), and an upstream that stops answering entirely (504, then failed/not_responding).
 *
 * One stack, tests concurrent: the kill cases spend most of their time waiting on the 15 s retry.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { waitFor } from "../support/stack";
import {
  createConnected,
  logLines,
  parkedPort,
  reaches,
  type Stack,
  sleep,
  spawnUpstream,
  startGatewayStack,
  statusReader,
  type UpstreamProcess,
  uniqueName,
} from "./helpers";

describe.concurrent("data plane: transport failures", () => {
  let stack: Stack;
  const processes: UpstreamProcess[] = [];
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    stack = await startGatewayStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([...processes.map((p) => p.kill()), ...upstreams.map((u) => u.close())]);
  });

  async function spawn(args: string[]): Promise<UpstreamProcess> {
    const started = await spawnUpstream(args);
    processes.push(started);
    return started;
  }

  /** Resolves once the gateway logged "tool call started" for `server`. */
  function callStarted(server: string): Promise<unknown> {
    return waitFor(
      async () => logLines(stack).some((line) => line.msg === "tool call started" && line.server === server),
      (seen) => seen,
      { timeoutMs: 10_000, intervalMs: 20 },
    );
  }

  for (const mode of ["sse", "json"] as const) {
    it(`upstream SIGKILLed mid-call (${mode} responses) → 502 upstream.unreachable, failed/unreachable, healed by the retry once it is back`, {
      timeout: 60_000,
    }, async ({ expect }) => {
      const port = await parkedPort();
      const flags = ["--port", String(port), ...(mode === "json" ? ["--json-response"] : [])];
      const first = await spawn(flags);
      const name = uniqueName(`kill${mode}`);
      const id = await createConnected(stack, { name, url: first.url });

      const call = stack.callTool(`${name}__slow`, { ms: 20_000 });
      await callStarted(name);
      await new Promise((resolve) => setTimeout(resolve, 200)); // the POST is at the upstream
      const killedAt = Date.now();
      await first.kill();

      const response = await call;
      const answeredAfterMs = Date.now() - killedAt;
      expect(response.status, JSON.stringify(response.body)).toBe(502);
      expect(response.body).toMatchObject({ code: "upstream.unreachable", status: 502 });
      expect(answeredAfterMs).toBeLessThan(5_000);

      const failed = await reaches(stack, id, "failed", 5_000);
      expect(failed).toMatchObject({ state: "failed", reason: "unreachable" });
      expect(failed.lastError).toEqual(expect.any(String));
      const failedAt = Date.now();

      // While it is failed, calls are refused up front.
      const refused = await waitFor(
        () => stack.callTool(`${name}__echo`, { text: "x" }),
        (r) => r.status === 409,
        { timeoutMs: 3_000, intervalMs: 100 },
      );
      expect(refused.body).toMatchObject({ code: "server.unavailable" });

      // Back on the same port: the retry the failed call scheduled (15 s) reconnects it, no admin action.
      await spawn(flags);
      const connected = await reaches(stack, id, "connected", 30_000);
      expect(connected).toMatchObject({ state: "connected", reason: null, toolCount: 4 });
      expect(Date.now() - failedAt).toBeGreaterThan(8_000); // it was the delayed retry, not an instant one

      const healed = await waitFor(
        () => stack.callTool(`${name}__echo`, { text: "back" }),
        (r) => r.status === 200,
        { timeoutMs: 5_000, intervalMs: 200 },
      );
      expect(healed.body).toMatchObject({ text: "back", isError: false });
    });
  }

  it("an upstream restarted between calls (its sessions forgotten) → the next call reopens transparently: 200, still connected", async ({
    expect,
  }) => {
    const port = await parkedPort();
    const first = await startUpstream({ port, name: "restarts" });
    const name = uniqueName("restart");
    const id = await createConnected(stack, { name, url: first.url });
    expect(await stack.callTool(`${name}__echo`, { text: "one" })).toMatchObject({ status: 200 });
    await first.close();
    await sleep(500); // a restart takes a moment: the gateway's client has seen its connections close
    const second = await startUpstream({ port, name: "restarts" });
    upstreams.push(second);

    const response = await stack.callTool(`${name}__echo`, { text: "two" });
    expect(response, JSON.stringify(response.body)).toMatchObject({ status: 200, body: { text: "two" } });
    expect(second.toolCalls).toBe(1);
    expect(await statusReader(stack, id)()).toMatchObject({ state: "connected" });
  });

  it("slow tool past its timeout (timeoutSeconds 1, slow 3000 ms) → 504 upstream.timeout within ~1 s; the server stays connected", async ({
    expect,
  }) => {
    const upstream = await startUpstream({ name: "slowpoke" });
    upstreams.push(upstream);
    const name = uniqueName("timeout");
    const id = await createConnected(stack, { name, url: upstream.url, timeoutSeconds: 1 });

    const started = Date.now();
    const response = await stack.callTool(`${name}__slow`, { ms: 3_000 });
    const elapsed = Date.now() - started;
    expect(response.status, JSON.stringify(response.body)).toBe(504);
    expect(response.body).toMatchObject({ code: "upstream.timeout", status: 504 });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(2_500);

    // The upstream answered a ping: a slow tool is not a dead server.
    expect(await statusReader(stack, id)()).toMatchObject({ state: "connected" });
    expect(await stack.callTool(`${name}__slow`, { ms: 100 })).toMatchObject({
      status: 200,
      body: { text: "done" },
    });
    const finished = logLines(stack).find(
      (line) => line.msg === "tool call finished" && line.server === name && line.outcome === "timeout",
    );
    expect(finished).toBeDefined();
  });

  it("a warm upstream that stops answering (call and ping both hang) → 504, and the server is marked failed/not_responding", async ({
    expect,
  }) => {
    const upstream = await startUpstream({ name: "hangs" });
    upstreams.push(upstream);
    const name = uniqueName("hang");
    const id = await createConnected(stack, { name, url: upstream.url, timeoutSeconds: 1 });
    expect(await stack.callTool(`${name}__echo`, { text: "warm" })).toMatchObject({ status: 200 });
    upstream.setHang(true);

    const started = Date.now();
    const response = await stack.callTool(`${name}__echo`, { text: "anyone?" });
    expect(response.status, JSON.stringify(response.body)).toBe(504);
    expect(response.body).toMatchObject({ code: "upstream.timeout" });
    expect(Date.now() - started).toBeLessThan(5_000);

    const failed = await reaches(stack, id, "failed", 5_000);
    expect(failed).toMatchObject({ reason: "not_responding" });
  });

  it.for([
    [500, "failed"],
    [401, "access_denied"],
    [403, "access_denied"],
  ] as const)(
    "a warm upstream that starts answering HTTP %i → 502 upstream.unreachable and status failed/%s",
    async ([status, reason], { expect }) => {
      const upstream = await startUpstream({ name: `http${status}` });
      upstreams.push(upstream);
      const name = uniqueName(`http${status}`);
      const id = await createConnected(stack, { name, url: upstream.url });
      expect(await stack.callTool(`${name}__echo`, { text: "warm" })).toMatchObject({ status: 200 });
      upstream.setFailWith(status);

      const response = await stack.callTool(`${name}__echo`, { text: "x" });
      expect(response.status, JSON.stringify(response.body)).toBe(502);
      expect(response.body).toMatchObject({ code: "upstream.unreachable" });
      const failed = await reaches(stack, id, "failed", 5_000);
      expect(failed, JSON.stringify(failed)).toMatchObject({ reason });
    },
  );

  it("a cold call to an upstream that stopped answering (initialize times out) → 504 upstream.timeout, failed/not_responding", async ({
    expect,
  }) => {
    const upstream = await startUpstream({ name: "hangs-cold" });
    upstreams.push(upstream);
    const name = uniqueName("coldhang");
    const id = await createConnected(stack, { name, url: upstream.url, timeoutSeconds: 1 });
    upstream.setHang(true); // before the gateway ever opened a session to it

    const started = Date.now();
    const response = await stack.callTool(`${name}__echo`, { text: "anyone?" });
    expect(response.status, JSON.stringify(response.body)).toBe(504);
    expect(response.body).toMatchObject({ code: "upstream.timeout" });
    expect(Date.now() - started).toBeLessThan(5_000);

    const failed = await reaches(stack, id, "failed", 5_000);
    expect(failed).toMatchObject({ reason: "not_responding" });
  });
});
