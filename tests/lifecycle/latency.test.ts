/**
 * A server's latency history on the real stack: the worker's probe lands at once, the gateway's REST
 * tool calls as one point per 10 s slot once the slot has ended (flushed off the request path; the
 * stack checks every 100 ms instead of every 10 s).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack, waitFor } from "../support/stack";

interface Point {
  at: string;
  kind: "probe" | "calls";
  ms: number;
  ok: boolean;
  count?: number;
  errors?: number;
  maxMs?: number;
}

describe("latency history: GET /v1/servers/{id}/latency", () => {
  let stack: Stack;
  let upstream: Upstream;
  beforeAll(async () => {
    stack = await startStack({ callLatencyFlushMs: 100 });
    upstream = await startUpstream({ name: "charted" });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  const history = (id: string) => async (): Promise<Point[]> => {
    const response = await stack.call("GET", `/v1/servers/${id}/latency`);
    expect(response.status).toBe(200);
    return response.body.points;
  };

  it("shows the connect's probe and the REST calls summed up per 10 s slot, oldest first", async () => {
    // Prepare: a server connected by its first probe
    const created = await stack.call("POST", "/v1/servers", { name: "charted", url: upstream.url });
    const id = created.body.id as string;
    const status = await waitFor(
      async () => (await stack.call("GET", `/v1/servers/${id}`)).body.status,
      (s) => s.state !== "connecting",
    );
    expect(status.state).toBe("connected");
    const probed = await history(id)();

    // Act: five calls (a tool error is an answer, not a failed call), one of them slow
    const call = (tool: string, args: Record<string, unknown>) =>
      stack.call("POST", `/v1/tools/charted__${tool}/call`, { arguments: args });
    for (const text of ["a", "b", "c"]) expect((await call("echo", { text })).status).toBe(200);
    expect((await call("slow", { ms: 150 })).status).toBe(200);
    expect((await call("fail", {})).body.isError).toBe(true);
    const counted = (points: Point[]) =>
      points.filter((p) => p.kind === "calls").reduce((sum, p) => sum + (p.count ?? 0), 0);
    const points = await waitFor(history(id), (points) => counted(points) === 5, { timeoutMs: 15_000 });

    // Assess
    expect(probed).toEqual([
      { at: status.lastConnectionAttemptAt, kind: "probe", ms: status.lastConnectionLatencyMs, ok: true },
    ]);
    const calls = points.filter((p) => p.kind === "calls");
    expect(points.filter((p) => p.kind === "probe")).toEqual(probed);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(2); // the calls may straddle two slots
    for (const point of calls) {
      expect(point).toMatchObject({ ok: true, errors: 0 });
      expect(Date.parse(point.at) % 10_000).toBe(0);
      expect(point.ms).toBeLessThanOrEqual(point.maxMs ?? -1);
    }
    expect(Math.max(...calls.map((p) => p.maxMs ?? 0))).toBeGreaterThanOrEqual(150);
    const times = points.map((p) => Date.parse(p.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("an unknown server is 404 server.not_found", async () => {
    const response = await stack.call("GET", "/v1/servers/no-such-server/latency");

    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: "server.not_found" });
  });
});
