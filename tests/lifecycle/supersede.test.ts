/**
 * Connection lifecycle — the generation fence: a disable cancels a pending retry, a delete during an
 * in-flight probe leaves nothing behind, a job delivered twice yields one coherent status (and one
 * retry), and a stale job or a late result of a superseded attempt is dropped.
 */
import { keys } from "@mcpgw/aws";
import { createLogger, type Job, parseServerSpec } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { handleBatch, processJob, type WorkerDeps } from "@mcpgw/worker";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createTestStore, scanTable } from "../support/aws";
import { type Stack, startStack, waitFor } from "../support/stack";
import { createServer, drainQueue, logLines, reaches, settled, statusReader, uniqueName } from "./helpers";

/**
 * The guarded fetch, with the k-th MCP `initialize` request held back k × `stepMs`: two deliveries of one
 * job still run at the same time, but their fenced writes land a moment apart. Real DynamoDB serialises
 * conditional writes to one item; moto (the emulator) does not — it checks and applies without a lock,
 * so two writes landing in the same millisecond can both pass the `lastJobId` condition there.
 */
function staggeredFetch(stepMs: number): typeof fetch {
  const guarded = createGuardedFetch({ allowPrivate: true });
  let initializes = 0;
  return async (input, init) => {
    if (typeof init?.body === "string" && init.body.includes('"method":"initialize"')) {
      const delay = initializes++ * stepMs;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
    return guarded(input, init);
  };
}

describe.concurrent("connection lifecycle: generation fence", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  async function upstream(options: Parameters<typeof startUpstream>[0]): Promise<Upstream> {
    const started = await startUpstream(options);
    upstreams.push(started);
    return started;
  }

  /** A worker over its own fresh store with no poller, so the test alone consumes its queue. */
  async function isolatedWorker(overrides: Partial<WorkerDeps> = {}) {
    const store = await createTestStore();
    const logs: string[] = [];
    const deps: WorkerDeps = {
      store,
      logger: createLogger({ level: "debug", sink: (line) => logs.push(line) }),
      fetch: createGuardedFetch({ allowPrivate: true }),
      retryDelaySeconds: 0, // retries visible at once, so the test can count them
      ...overrides,
    };
    const queueUrl = await store.jobs.url();
    const queued = async () =>
      (await drainQueue(store.clients.sqs, queueUrl)).map((m) => JSON.parse(m.body) as Job);
    return { store, deps, logs, queued };
  }

  it("disable while a retry is pending → stays disabled for 20 s+, the upstream hears nothing more", async ({
    expect,
  }) => {
    const up = await upstream({ failWith: 500 });
    const id = await createServer(stack, { name: uniqueName("disable"), url: up.url });
    expect(await settled(stack, id)).toMatchObject({ state: "failed", reason: "failed" });
    // The failure scheduled a retry 15 s out; disable now, while it is pending.
    const patched = await stack.call("PATCH", `/v1/servers/${id}`, { enabled: false });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ enabled: false, status: { state: "disabled", reason: null } });
    up.resetCounters();

    const until = Date.now() + 20_500;
    const states = new Set<string>();
    while (Date.now() < until) {
      states.add((await statusReader(stack, id)()).state);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect([...states]).toEqual(["disabled"]);
    expect(up.requests).toBe(0);
    expect(up.connections).toBe(0);
    // The pending retry did arrive — and was dropped by the fence.
    const dropped = logLines(stack).filter((l) => l.serverId === id && l.msg === "job dropped");
    expect(dropped).toEqual(expect.arrayContaining([expect.objectContaining({ job: "retry" })]));
  });

  it("delete during an in-flight probe → 404, and nothing for the server ever reappears", async ({
    expect,
  }) => {
    const up = await upstream({ hang: true });
    const id = await createServer(stack, { name: uniqueName("deleted"), url: up.url });
    await waitFor(
      async () => up.hangingRequests,
      (n) => n > 0,
      { timeoutMs: 10_000 },
    );
    expect((await statusReader(stack, id)()).state).toBe("connecting");

    expect((await stack.call("DELETE", `/v1/servers/${id}`)).status).toBe(204);
    expect((await stack.call("GET", `/v1/servers/${id}`)).status).toBe(404);
    // Nothing but the delete's own tombstone on the change feed (it expires in a day) — and the audit
    // trail's record of the create and the delete, which is append-only history, not the server.
    const mentions = async () =>
      (await scanTable(stack.store.config)).filter(
        (item) =>
          JSON.stringify(item).includes(id) &&
          item.sk !== keys.serverTombstone(id).sk &&
          !String(item.pk).startsWith("AUDIT#"),
      );
    expect(await mentions()).toEqual([]);

    // Wait for the in-flight attempt to settle (10 s deadline): its fenced write must be refused.
    await waitFor(
      async () => logLines(stack).filter((l) => l.serverId === id),
      (lines) => lines.some((l) => l.msg === "attempt result dropped"),
      { timeoutMs: 17_000, intervalMs: 250 },
    );
    // …and stays refused: scan a few times over the next seconds.
    for (let i = 0; i < 4; i++) {
      expect(await mentions()).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect((await stack.call("GET", `/v1/servers/${id}`)).status).toBe(404);
    const listed = (await stack.call("GET", "/v1/servers")).body.servers as Array<{ id: string }>;
    expect(listed.map((s) => s.id)).not.toContain(id);
    expect(logLines(stack).filter((l) => l.serverId === id && l.msg === "server failed")).toEqual([]);
  });

  it("the same failing job delivered twice at once → one failed status, ONE retry enqueued", async ({
    expect,
  }) => {
    const up = await upstream({ failWith: 500 });
    const { store, deps, queued } = await isolatedWorker({ fetch: staggeredFetch(300) });
    const server = await store.servers.create(parseServerSpec({ name: uniqueName("dup"), url: up.url }));
    const job: Job = { type: "connect", serverId: server.id, generation: 1 };

    const outcomes = await Promise.all([
      processJob(deps, job, "same-message-id"),
      processJob(deps, job, "same-message-id"),
    ]);
    expect(outcomes.sort()).toEqual(["dropped", "failed"]);
    expect(up.requests).toBe(1); // the first delivery's claim on the generation dropped the second before it probed
    expect(await store.statuses.get(server.id)).toMatchObject({
      state: "failed",
      reason: "failed",
      generation: 1,
    });
    expect(await queued()).toEqual([
      { type: "retry", serverId: server.id, generation: 1, after: expect.any(String) },
    ]);

    // Redelivered later (SQS at-least-once): still no second outcome and no second retry.
    const before = await store.statuses.get(server.id);
    expect(await processJob(deps, job, "same-message-id")).toBe("dropped");
    expect(await store.statuses.get(server.id)).toEqual(before);
    expect(await queued()).toEqual([]);
  });

  it("a duplicated record in one SQS batch → one connected status and catalogue, no failures", async ({
    expect,
  }) => {
    const up = await upstream({});
    const { store, deps, queued } = await isolatedWorker({ fetch: staggeredFetch(300) });
    const server = await store.servers.create(parseServerSpec({ name: uniqueName("batch"), url: up.url }));
    const body = JSON.stringify({ type: "connect", serverId: server.id, generation: 1 });

    const response = await handleBatch(deps, [
      { messageId: "dup-1", body },
      { messageId: "dup-1", body },
    ]);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(await store.statuses.get(server.id)).toMatchObject({
      state: "connected",
      reason: null,
      toolCount: 4,
      generation: 1,
    });
    const catalog = await store.statuses.getCatalog(server.id);
    expect(catalog?.tools.map((t) => t.name).sort()).toEqual(["add", "echo", "fail", "slow"]);
    expect(await queued()).toEqual([]);
  });

  it("a stale-generation job is dropped without touching the status", async ({ expect }) => {
    const up = await upstream({ failWith: 500 });
    const { store, deps, queued } = await isolatedWorker();
    const server = await store.servers.create(parseServerSpec({ name: uniqueName("stale"), url: up.url }));
    const bumped = await store.statuses.bump(server.id, "connecting"); // e.g. an edit: generation 2
    expect(bumped?.generation).toBe(2);

    const before = await store.statuses.get(server.id);
    expect(await processJob(deps, { type: "retry", serverId: server.id, generation: 1 }, "old-retry")).toBe(
      "dropped",
    );
    expect(await store.statuses.get(server.id)).toEqual(before);
    expect(up.requests).toBe(0); // dropped before any attempt
    expect(await queued()).toEqual([]);
  });

  it("a late result of a superseded in-flight attempt is dropped (no write, no retry)", async ({
    expect,
  }) => {
    const up = await upstream({ hang: true });
    const { store, deps, queued } = await isolatedWorker({ deadlineMs: 1_500, graceMs: 500 });
    const server = await store.servers.create(parseServerSpec({ name: uniqueName("late"), url: up.url }));

    const attempt = processJob(deps, { type: "connect", serverId: server.id, generation: 1 }, "m-late");
    await waitFor(
      async () => up.hangingRequests,
      (n) => n > 0,
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    const superseding = await store.statuses.bump(server.id, "connecting"); // e.g. a reconnect
    expect(await attempt).toBe("dropped");
    const after = await store.statuses.get(server.id);
    expect(after).toEqual(superseding);
    expect(after).toMatchObject({ state: "connecting", reason: null, error: null, lastError: null });
    expect(await queued()).toEqual([]);
  });

  it("reconnect supersedes a failed server and heals it once the upstream is fixed", async ({ expect }) => {
    const up = await upstream({ failWith: 503 });
    const id = await createServer(stack, { name: uniqueName("reconnect"), url: up.url });
    expect(await settled(stack, id)).toMatchObject({ state: "failed" });
    up.setFailWith(undefined);
    const reconnect = await stack.call("POST", `/v1/servers/${id}/reconnect`);
    expect(reconnect.status).toBe(202);
    expect(reconnect.body.status.state).toBe("connecting");
    expect(await reaches(stack, id, "connected")).toMatchObject({ toolCount: 4, reason: null });
  });
});
