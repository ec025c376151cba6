/**
 * Edits keep serving: a PATCH without If-Match applies to the current version (its own races retried,
 * never a 409), its answer carries exactly the version it wrote, and an edit that does not reach the
 * upstream (a call timeout, a rename) applies without a reconnect while calls go on.
 */
import { describe, it } from "vitest";
import {
  createConnected,
  logLines,
  type Stack,
  statusReader,
  uniqueName,
  useGatewayStack,
} from "../gateway/helpers";
import { waitFor } from "../support/stack";

/**
 * Calls `tool()` (re-read before each call) back to back until stopped; counts answers by status, and
 * keeps each refusal's body (and, in `refused`, the tool it named and when its answer came).
 */
function steadyCalls(stack: Stack, tool: () => string) {
  const statuses: number[] = [];
  const refusals: unknown[] = [];
  const refused: Array<{ tool: string; answeredAt: number; body: unknown }> = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const named = tool();
      const { status, body } = await stack.callTool(named, { text: "hi" });
      statuses.push(status);
      if (status !== 200) {
        refusals.push(body);
        refused.push({ tool: named, answeredAt: performance.now(), body });
      }
    }
  })();
  return {
    statuses,
    refusals,
    refused,
    async stop() {
      running = false;
      await done;
    },
  };
}

describe.concurrent("edits keep serving", () => {
  const suite = useGatewayStack();
  const upstream = suite.upstream;

  it("concurrent PATCHes without If-Match all succeed, each answering the version it wrote", async ({
    expect,
  }) => {
    const { stack } = suite;
    const up = await upstream();
    const name = uniqueName("patches");
    const id = await createConnected(stack, { name, url: up.url });
    const edits = 8;
    const answers = await Promise.all(
      Array.from({ length: edits }, (_, i) =>
        stack.request("PATCH", `/v1/servers/${id}`, { body: { timeoutSeconds: 10 + i } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(edits).fill(200));
    const etags = answers.map((a) => a.headers.get("etag"));
    expect(new Set(etags).size).toBe(edits);
    for (const answer of answers) {
      expect(answer.headers.get("etag")).toBe(`"${answer.body.version}"`);
      // The body is what this PATCH wrote, not another writer's later version.
      expect(answer.body.timeoutSeconds).toBe(10 + answers.indexOf(answer));
    }
    const final = await stack.call("GET", `/v1/servers/${id}`);
    expect(final.body.version).toBe(edits + 1);
    expect(answers.map((a) => a.body.version).sort((a, b) => a - b)).toEqual(
      Array.from({ length: edits }, (_, i) => i + 2),
    );
  });

  it("concurrent PATCHes with the same If-Match: one succeeds, every other answers 412 (never 409)", async ({
    expect,
  }) => {
    const { stack } = suite;
    const up = await upstream();
    const id = await createConnected(stack, { name: uniqueName("ifmatch"), url: up.url });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        stack.request("PATCH", `/v1/servers/${id}`, {
          body: { timeoutSeconds: 20 + i },
          headers: { "if-match": '"1"' },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412, 412, 412]);
    expect(answers.find((a) => a.status === 200)?.headers.get("etag")).toBe('"2"');
  });

  it("a timeout edit and a rename under steady calls: no call refused, no reconnect", async ({ expect }) => {
    const { stack } = suite;
    const up = await upstream();
    const first = uniqueName("steady");
    let name = first;
    const id = await createConnected(stack, { name, url: up.url });
    const connects = () =>
      logLines(stack).filter((l) => l.serverId === id && l.msg === "server connected").length;
    const calls = steadyCalls(stack, () => `${name}__echo`);
    await waitFor(
      async () => calls.statuses.length,
      (n) => n >= 5,
    );

    const timeout = await stack.call("PATCH", `/v1/servers/${id}`, { timeoutSeconds: 45 });
    expect(timeout.status).toBe(200);
    expect(timeout.body.status.state).toBe("connected");
    const counted = calls.statuses.length;
    await waitFor(
      async () => calls.statuses.length,
      (n) => n >= counted + 20,
    );

    const renamed = uniqueName("renamed");
    const renameSentAt = performance.now();
    const rename = await stack.call("PATCH", `/v1/servers/${id}`, { name: renamed });
    expect(rename.status).toBe(200);
    expect(rename.body.status.state).toBe("connected");
    name = renamed;
    const after = calls.statuses.length;
    await waitFor(
      async () => calls.statuses.length,
      (n) => n >= after + 20,
    );
    await calls.stop();

    // The old name is free once the rename is written: a call naming it that was answered after the
    // PATCH was sent (in flight meanwhile, or made before the loop took the new name) may be answered
    // 404, as it should be. Nothing else is refused.
    const oldNameGone = (r: (typeof calls.refused)[number]) =>
      r.tool === `${first}__echo` &&
      r.answeredAt >= renameSentAt &&
      (r.body as { code?: string }).code === "server.not_found";
    expect(calls.refused.filter((r) => !oldNameGone(r))).toEqual([]);
    expect((await statusReader(stack, id)()).state).toBe("connected");
    expect(connects()).toBe(1);
    // The list shows it under its new name, and the old name is free.
    const listed = (await stack.call("GET", "/v1/servers?limit=500")).body.servers as Array<{ name: string }>;
    expect(listed.map((s) => s.name)).toContain(renamed);
    expect((await stack.call("GET", `/v1/servers/${first}`)).status).toBe(404);
    expect((await stack.callTool(`${renamed}__echo`, { text: "x" })).status).toBe(200);
  });
});

describe("edits that reach the upstream connect beside the serving generation", () => {
  const suite = useGatewayStack();
  const upstream = suite.upstream;

  /** Past the directory's staleness bound (2 s): what the data plane does now, it does for the edit. */
  const STALENESS_MS = 2_500;
  /** Lets calls run for `ms` (and at least `n` more be answered). */
  const during = async (calls: ReturnType<typeof steadyCalls>, ms: number, n = 10) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await more(calls, n);
  };

  /** Waits until `n` more calls were answered. */
  const more = (calls: ReturnType<typeof steadyCalls>, n: number) => {
    const from = calls.statuses.length;
    return waitFor(
      async () => calls.statuses.length,
      (count) => count >= from + n,
    );
  };

  it("a URL edit under steady calls: none refused; the old upstream serves until the new one is connected, then the new one", async ({
    expect,
  }) => {
    const { stack } = suite;
    const [first, second] = await Promise.all([upstream(), upstream()]);
    const name = uniqueName("move");
    const id = await createConnected(stack, { name, url: first.url });
    const calls = steadyCalls(stack, () => `${name}__echo`);
    await more(calls, 5);

    stack.holdProbes(); // the new generation stays `connecting` while held
    const edited = await stack.call("PATCH", `/v1/servers/${id}`, { url: second.url });
    expect(edited.status).toBe(200);
    expect(edited.body.status.state).toBe("connecting");
    const servedBefore = first.toolCalls;
    await during(calls, STALENESS_MS, 30);
    expect(first.toolCalls).toBeGreaterThanOrEqual(servedBefore + 25);
    expect(second.toolCalls).toBe(0);
    expect((await statusReader(stack, id)()).state).toBe("connecting");
    expect(await stack.store.servers.getServing(id)).toMatchObject({ url: first.url });

    stack.releaseProbes();
    await waitFor(statusReader(stack, id), (s) => s.state === "connected");
    // The switch ends the old generation's serving: its fields and kept config (sealed secrets) are gone.
    const settled = await stack.store.statuses.get(id);
    expect([settled?.servingGeneration, settled?.servingSince]).toEqual([undefined, undefined]);
    expect(await stack.store.servers.getServing(id)).toBeUndefined();
    await waitFor(
      async () => second.toolCalls,
      (n) => n >= 10,
    );
    const oldCalls = first.toolCalls;
    await more(calls, 10);
    await calls.stop();
    expect(first.toolCalls).toBe(oldCalls);
    expect(calls.refusals).toEqual([]);
  });

  it("a headers edit under steady calls: none refused, and the new headers reach the upstream once connected", async ({
    expect,
  }) => {
    const { stack } = suite;
    const up = await upstream();
    const name = uniqueName("hdr");
    const id = await createConnected(stack, { name, url: up.url, headers: { "X-Team": "blue" } });
    const calls = steadyCalls(stack, () => `${name}__echo`);
    await more(calls, 5);

    stack.holdProbes();
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { headers: { "X-Team": "red" } })).status).toBe(
      200,
    );
    await during(calls, STALENESS_MS);
    expect(up.lastHeaders?.["x-team"]).toBe("blue");
    stack.releaseProbes();
    await waitFor(statusReader(stack, id), (s) => s.state === "connected");
    await waitFor(
      async () => {
        await more(calls, 1);
        return up.lastHeaders?.["x-team"];
      },
      (team) => team === "red",
    );
    await calls.stop();
    expect(calls.refusals).toEqual([]);
  });

  it("a new generation that fails: calls are served until the failure, then refused (the old one is retired)", async ({
    expect,
  }) => {
    const { stack } = suite;
    const [good, broken] = await Promise.all([upstream(), upstream({ failWith: 500 })]);
    const name = uniqueName("fails");
    const id = await createConnected(stack, { name, url: good.url });
    const calls = steadyCalls(stack, () => `${name}__echo`);
    await more(calls, 5);

    stack.holdProbes(); // the new generation stays `connecting` while held: the old one serves
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { url: broken.url })).status).toBe(200);
    await during(calls, STALENESS_MS);
    expect(calls.refusals).toEqual([]);
    stack.releaseProbes();
    const failed = await waitFor(statusReader(stack, id), (s) => s.state !== "connecting");
    expect(failed.state).toBe("failed");
    // Within the directory's staleness bound (≤ 2 s), calls are refused: the admin changed how to reach it.
    const refused = await waitFor(
      () => stack.callTool(`${name}__echo`, { text: "x" }),
      (r) => r.status !== 200,
      { timeoutMs: 3_000, intervalMs: 50 },
    );
    await calls.stop();
    expect(refused).toMatchObject({ status: 409, body: { code: "server.unavailable" } });
    // Every refusal came once the new generation had failed — none while it was connecting.
    expect(calls.refusals.filter((body) => (body as { state?: string }).state !== "failed")).toEqual([]);
    expect(broken.toolCalls).toBe(0);
  });
});
