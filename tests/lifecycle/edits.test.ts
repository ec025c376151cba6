/**
 * Edits keep serving: a PATCH without If-Match applies to the current version (its own races retried,
 * never a 409), its answer carries exactly the version it wrote, and an edit that does not reach the
 * upstream (a call timeout, a rename) applies without a reconnect while calls go on.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import {
  createConnected,
  logLines,
  type Stack,
  startGatewayStack,
  statusReader,
  uniqueName,
} from "../gateway/helpers";
import { waitFor } from "../support/stack";

/** Calls `tool()` (re-read before each call) back to back until stopped; counts answers by status. */
function steadyCalls(stack: Stack, tool: () => string) {
  const statuses: number[] = [];
  const refusals: unknown[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const { status, body } = await stack.callTool(tool(), { text: "hi" });
      statuses.push(status);
      if (status !== 200) refusals.push(body);
    }
  })();
  return {
    statuses,
    refusals,
    async stop() {
      running = false;
      await done;
    },
  };
}

describe.concurrent("edits keep serving", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    stack = await startGatewayStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  async function upstream(): Promise<Upstream> {
    const started = await startUpstream();
    upstreams.push(started);
    return started;
  }

  it("concurrent PATCHes without If-Match all succeed, each answering the version it wrote", async ({
    expect,
  }) => {
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

  it("a stale If-Match still answers 412", async ({ expect }) => {
    const up = await upstream();
    const id = await createConnected(stack, { name: uniqueName("ifmatch"), url: up.url });
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { timeoutSeconds: 12 })).status).toBe(200);
    const stale = await stack.request("PATCH", `/v1/servers/${id}`, {
      body: { timeoutSeconds: 13 },
      headers: { "if-match": '"1"' },
    });
    expect(stale.status).toBe(412);
  });

  it("a timeout edit and a rename under steady calls: no call refused, no reconnect", async ({ expect }) => {
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

    expect(calls.refusals).toEqual([]);
    expect((await statusReader(stack, id)()).state).toBe("connected");
    expect(connects()).toBe(1);
    // The list shows it under its new name, and the old name is free.
    const listed = (await stack.call("GET", "/v1/servers?limit=500")).body.servers as Array<{ name: string }>;
    expect(listed.map((s) => s.name)).toContain(renamed);
    expect((await stack.call("GET", `/v1/servers/${first}`)).status).toBe(404);
    expect((await stack.callTool(`${renamed}__echo`, { text: "x" })).status).toBe(200);
  });
});
