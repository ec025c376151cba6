/**
 * Regression: after the emulator came back empty, deleted servers' tools were still listed and one was
 * still called with 200 at +23 s (the directory re-read everything only every 5 minutes), and their
 * stdio children lived on. Now the table carries an epoch, written when it is made; the data plane's
 * next look at its change feed sees another one and drops its whole view, so within ~2 s the old
 * servers' tools are neither listed nor callable; and the runner stops the children of servers that no
 * longer exist within one check (the sweep's interval, 2 s here).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  createServer,
  isAlive,
  pidOf,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
  waitFor,
} from "../runner/helpers";
import { removeResource, restoreResource } from "../support/aws";

/** How often the runner looks for children of servers gone (SWEEP_INTERVAL_SECONDS, shortened). */
const GONE_CHECK_MS = 2_000;
/** The data plane's bound: a view at most 2 × 1 s old, and one refresh that reads everything. */
const DIRECTORY_BOUND_MS = 3_000;

describe("a table deleted and made again (the emulator came back empty)", () => {
  let stack: RunnerStack;
  let upstream: Upstream;
  const http = uniqueName("reset-http");
  const stdio = uniqueName("reset-stdio");
  let pid: number;

  beforeAll(async () => {
    stack = await startRunnerStack({ goneCheckMs: GONE_CHECK_MS });
    upstream = await startUpstream({ name: "reset" });
    const [httpId, stdioId] = await Promise.all([
      createServer(stack, { name: http, url: upstream.url }),
      createServer(stack, { name: stdio, command: process.execPath, args: [TINY_STDIO] }),
    ]);
    await Promise.all([reaches(stack, httpId, "connected"), reaches(stack, stdioId, "connected")]);
    pid = await pidOf(stack, stdioId);
  }, 60_000);
  afterAll(async () => {
    await stack?.cleanup();
    await upstream?.close();
  });

  it("lists and calls none of the old servers' tools within ~2 s, and their stdio children end within one check", async () => {
    // Prepare: both servers serve
    const names = async () =>
      ((await stack.call("GET", "/v1/tools")).body?.tools ?? []).map((tool: { name: string }) => tool.name);
    await waitFor(names, (listed) => listed.includes(`${http}__echo`) && listed.includes(`${stdio}__ping`), {
      timeoutMs: 5_000,
      intervalMs: 100,
    });
    expect((await stack.callTool(`${http}__echo`, { text: "before" })).status).toBe(200);
    expect(isAlive(pid)).toBe(true);

    // Act: the table is deleted and made again, empty (what an emulator that came back empty holds)
    await removeResource(stack.store.config, "table");
    await restoreResource(stack.store.config, "table");
    const madeAgain = Date.now();

    // Assess: within the directory's bound, nothing of the old table is listed or called
    await waitFor(
      async () => ({
        listed: await names(),
        call: (await stack.callTool(`${http}__echo`, { text: "after" })).status,
      }),
      (r) => r.listed.length === 0 && r.call === 404,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(Date.now() - madeAgain).toBeLessThan(DIRECTORY_BOUND_MS);
    expect((await stack.call("GET", "/v1/servers")).body.servers).toEqual([]);

    // Assess: the runner's next check stops the child of the server that no longer exists
    await waitFor(
      async () => isAlive(pid),
      (alive) => !alive,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(Date.now() - madeAgain).toBeLessThan(GONE_CHECK_MS + 2_000);
    expect(await stack.instances()).toEqual([]);
  }, 90_000);
});
