/**
 * `GET /v1/audit/stats` against the stack and a real upstream: the calls made through the gateway come
 * back as the window's counts, errors (a tool's own failures among them), error rate and p50/p95 by
 * nearest rank over the calls' recorded durations; a server by name or id; the window validated;
 * admin only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createServer, reaches } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

/** The figures of a window, as the API answers them. */
interface Stats {
  window: string;
  bucketMs: number;
  buckets: Array<{ at: string; calls: number; errors: number; toolErrors: number; p50Ms: number | null }>;
  totals: {
    calls: number;
    errors: number;
    toolErrors: number;
    errorRate: number;
    p50Ms: number | null;
    p95Ms: number | null;
  };
  partial: boolean;
}

/** How long each `slow` call sleeps: 20 calls, 15 to 300 ms. */
const SLEEPS = Array.from({ length: 20 }, (_, i) => (i + 1) * 15);

describe("audit stats", () => {
  let stack: Stack;
  let upstream: Upstream;
  let serverId: string;

  beforeAll(async () => {
    stack = await startStack();
    upstream = await startUpstream({ name: "docs" });
    serverId = await createServer(stack, {
      transport: "http",
      name: "docs",
      url: upstream.url,
      timeoutSeconds: 1,
    });
    await reaches(stack, serverId, "connected");
    // 20 slow calls (in a shuffled order), 2 tool errors, 1 timeout (the server's 1 s deadline).
    for (const ms of [...SLEEPS].sort((a, b) => ((a * 7) % 11) - ((b * 7) % 11))) {
      const call = await stack.call("POST", "/v1/tools/docs__slow/call", { arguments: { ms } });
      expect(call.status).toBe(200);
    }
    for (let i = 0; i < 2; i++) {
      const failed = await stack.call("POST", "/v1/tools/docs__fail/call", { arguments: {} });
      expect(failed.body.isError).toBe(true);
    }
    const timedOut = await stack.call("POST", "/v1/tools/docs__slow/call", { arguments: { ms: 3_000 } });
    expect(timedOut.body.code).toBe("upstream.timeout");
  }, 60_000);
  afterAll(async () => {
    await upstream?.close();
    await stack?.stop();
  });

  /** The stats of `query`, once they count `calls` calls (the audit trail is written off the call's path). */
  async function statsOnce(query: string, calls: number): Promise<Stats> {
    const answer = await waitFor(
      () => stack.call("GET", `/v1/audit/stats?${query}`),
      (response) => response.status !== 200 || response.body.totals.calls >= calls,
      { timeoutMs: 15_000 },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body as Stats;
  }

  /** The nearest-rank percentile of `values`. */
  const rank = (values: number[], p: number) =>
    [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1];

  it("counts a tool's calls, errors and p50/p95 over the last hour", async () => {
    const stats = await statsOnce("server=docs&tool=slow", SLEEPS.length + 1);
    expect(stats.window).toBe("hour");
    expect(stats.bucketMs).toBe(60_000);
    expect(stats.buckets).toHaveLength(60);
    expect(stats.partial).toBe(false);
    expect(stats.totals).toMatchObject({ calls: 21, errors: 1, toolErrors: 0 });
    expect(stats.totals.errorRate).toBeCloseTo(1 / 21, 10);
    expect(stats.buckets.reduce((sum, bucket) => sum + bucket.calls, 0)).toBe(21);
    // The percentiles are those of the durations the trail recorded for these calls.
    const trail = await stack.call("GET", "/v1/audit?server=docs&tool=slow&limit=100");
    expect(trail.status).toBe(200);
    const durations = (trail.body.events as Array<{ durationMs: number }>).map((event) => event.durationMs);
    expect(durations).toHaveLength(21);
    expect(stats.totals.p50Ms).toBe(rank(durations, 50));
    expect(stats.totals.p95Ms).toBe(rank(durations, 95));
    // And they are the sleeps': the 11th of 21 slept 165 ms; the 20th (p95) 300 ms (the timeout is slowest).
    expect(stats.totals.p50Ms).toBeGreaterThanOrEqual(165);
    expect(stats.totals.p50Ms).toBeLessThan(1_000);
    expect(stats.totals.p95Ms).toBeGreaterThanOrEqual(300);
  });

  it("counts a tool's own failures as errors, apart as tool errors", async () => {
    const stats = await statsOnce("server=docs&tool=fail", 2);
    expect(stats.totals).toMatchObject({ calls: 2, errors: 2, toolErrors: 2, errorRate: 1 });
  });

  it("takes a server by name or id, a tool by its qualified name, and the day's window", async () => {
    const byName = await statsOnce("server=docs", 23);
    expect(byName.totals).toMatchObject({ calls: 23, errors: 3, toolErrors: 2 });
    const byId = await statsOnce(`server=${serverId}`, 23);
    expect(byId.totals).toEqual(byName.totals);
    const qualified = await statsOnce("tool=docs__fail", 2);
    expect(qualified.totals.calls).toBe(2);
    const day = await statsOnce("server=docs&window=day", 23);
    expect(day).toMatchObject({ window: "day", bucketMs: 1_800_000, partial: false });
    expect(day.buckets).toHaveLength(48);
    expect(day.totals).toEqual(byName.totals);
  });

  it("refuses a window it does not know, and a client key", async () => {
    const week = await stack.call("GET", "/v1/audit/stats?server=docs&window=week");
    expect(week.status).toBe(400);
    expect(week.body.code).toBe("request.invalid");
    const key = await stack.call("POST", "/v1/keys", { name: "reader" });
    const asKey = await stack.callAs(key.body.key)("GET", "/v1/audit/stats?server=docs");
    expect(asKey.status).toBe(403);
  });
});
