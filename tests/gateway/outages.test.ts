/**
 * Outages seen in seconds (session-watch.ts): a server the gateway holds a warm session with, killed
 * while nobody calls it, is `failed` within 10 s — no call, no sweep (this stack runs none on its own) —
 * whether its 2025 session keeps a standing stream (its drop is reported) or not (`--stateless`: the
 * quiet session's ping goes unanswered). A live server left quiet stays connected, its session warm.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  createConnected,
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

describe.concurrent("data plane: outages seen by warm sessions", () => {
  let stack: Stack;
  const processes: UpstreamProcess[] = [];

  beforeAll(async () => {
    stack = await startGatewayStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(processes.map((p) => p.kill()));
  });

  async function warmServer(
    flags: string[],
  ): Promise<{ id: string; name: string; upstream: UpstreamProcess }> {
    const upstream = await spawnUpstream(["--port", String(await parkedPort()), ...flags]);
    processes.push(upstream);
    const name = uniqueName("outage");
    const id = await createConnected(stack, { name, url: upstream.url });
    const warm = await stack.callTool(`${name}__echo`, { text: "warm" });
    if (warm.status !== 200) throw new Error(`warming call failed: ${JSON.stringify(warm.body)}`);
    return { id, name, upstream };
  }

  for (const [label, flags] of [
    ["a session with a standing stream", []],
    ["a stateless session (no stream: the ping finds it)", ["--stateless"]],
  ] as const) {
    it(`upstream killed while quiet, ${label} → failed within 10 s, no call made`, {
      timeout: 40_000,
    }, async ({ expect }) => {
      const { id, upstream } = await warmServer([...flags]);
      const killedAt = Date.now();
      await upstream.kill();
      const failed = await reaches(stack, id, "failed", 10_000);
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      expect(failed).toMatchObject({ state: "failed", reason: "unreachable" });
    });
  }

  it("a live server left quiet past two checks stays connected, and its session warm", {
    timeout: 40_000,
  }, async ({ expect }) => {
    const { id, name } = await warmServer(["--stateless"]);
    await sleep(11_000);
    expect(await statusReader(stack, id)()).toMatchObject({ state: "connected" });
    const call = await stack.callTool(`${name}__echo`, { text: "still here" });
    expect(call.status).toBe(200);
  });
});
