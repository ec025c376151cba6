/**
 * Data plane — admin edits reach calls within the documented staleness (the directory caches
 * DynamoDB reads for ≤ 1 s; the contract allows ≤ 2 s): disabling refuses calls (409) and hides the
 * tools while other servers stay listed; re-enabling brings calls back after the reconnect; a
 * timeoutSeconds edit changes the per-call timeout; a URL edit moves calls to the new upstream
 * (the warm session of the old config version is not reused); a deleted server is 404.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { waitFor } from "../support/stack";
import { createConnected, reaches, type Stack, sleep, startGatewayStack, uniqueName } from "./helpers";

/** The documented bound, plus a margin for a loaded CI machine. */
const STALENESS_MS = 2_000;
const MARGIN_MS = 750;

describe.concurrent("data plane: config edits take effect within the staleness bound", () => {
  let stack: Stack;
  const upstreams: Upstream[] = [];

  beforeAll(async () => {
    stack = await startGatewayStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  async function upstream(name: string): Promise<Upstream> {
    const started = await startUpstream({ name });
    upstreams.push(started);
    return started;
  }

  async function patch(id: string, body: Record<string, unknown>): Promise<number> {
    const response = await stack.call("PATCH", `/v1/servers/${id}`, body);
    if (response.status !== 200)
      throw new Error(`PATCH → ${response.status} ${JSON.stringify(response.body)}`);
    return Date.now();
  }

  it("disable → calls refused (409 server.unavailable) and tools hidden within 2 s, other servers unaffected; re-enable → calls work again", async ({
    expect,
  }) => {
    const [target, bystander] = await Promise.all([upstream("target"), upstream("bystander")]);
    const name = uniqueName("edit");
    const other = uniqueName("other");
    const [id] = await Promise.all([
      createConnected(stack, { name, url: target.url }),
      createConnected(stack, { name: other, url: bystander.url }),
    ]);
    // Warm: the gateway holds a session when the edit lands.
    expect(await stack.callTool(`${name}__echo`, { text: "warm" })).toMatchObject({ status: 200 });

    const editedAt = await patch(id, { enabled: false });
    const refused = await waitFor(
      () => stack.callTool(`${name}__echo`, { text: "x" }),
      (r) => r.status !== 200,
      { timeoutMs: STALENESS_MS + MARGIN_MS, intervalMs: 50 },
    );
    const tookMs = Date.now() - editedAt;
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "server.unavailable" });
    expect(tookMs).toBeLessThanOrEqual(STALENESS_MS + MARGIN_MS);

    // From then on it stays refused (no flapping between cached snapshots).
    for (let i = 0; i < 5; i++) {
      expect((await stack.callTool(`${name}__echo`, { text: "x" })).status).toBe(409);
      await sleep(100);
    }
    const listed = (await stack.listTools()).map((t) => t.server);
    expect(listed).not.toContain(name);
    expect(listed).toContain(other);
    expect(await stack.callTool(`${other}__echo`, { text: "still" })).toMatchObject({ status: 200 });

    const enabledAt = await patch(id, { enabled: true });
    await reaches(stack, id, "connected", 15_000);
    const back = await waitFor(
      () => stack.callTool(`${name}__echo`, { text: "again" }),
      (r) => r.status === 200,
      { timeoutMs: STALENESS_MS + MARGIN_MS, intervalMs: 50 },
    );
    expect(back.body).toMatchObject({ text: "again" });
    expect(Date.now() - enabledAt).toBeLessThan(15_000);
    expect((await stack.listTools()).map((t) => t.server)).toContain(name);
  });

  it("timeoutSeconds 30 → 1: within 2 s the same slow call becomes a 504; back to 30 → it succeeds again", async ({
    expect,
  }) => {
    const target = await upstream("timeouts");
    const name = uniqueName("tmo");
    const id = await createConnected(stack, { name, url: target.url, timeoutSeconds: 30 });
    expect(await stack.callTool(`${name}__slow`, { ms: 1_500 })).toMatchObject({ status: 200 });

    const editedAt = await patch(id, { timeoutSeconds: 1 });
    await reaches(stack, id, "connected", 10_000); // the edit reconnects the server
    await sleep(Math.max(0, editedAt + STALENESS_MS - Date.now()));
    const started = Date.now();
    const timedOut = await stack.callTool(`${name}__slow`, { ms: 1_500 });
    expect(timedOut.status, JSON.stringify(timedOut.body)).toBe(504);
    expect(timedOut.body).toMatchObject({ code: "upstream.timeout" });
    expect(Date.now() - started).toBeLessThan(1_450);

    const restoredAt = await patch(id, { timeoutSeconds: 30 });
    await reaches(stack, id, "connected", 10_000);
    await sleep(Math.max(0, restoredAt + STALENESS_MS - Date.now()));
    expect(await stack.callTool(`${name}__slow`, { ms: 1_500 })).toMatchObject({
      status: 200,
      body: { text: "done" },
    });
  });

  it("url edit → calls go to the new upstream (the old version's warm session is not reused)", async ({
    expect,
  }) => {
    const [first, second] = await Promise.all([upstream("first"), upstream("second")]);
    const name = uniqueName("move");
    const id = await createConnected(stack, { name, url: first.url });
    expect(await stack.callTool(`${name}__echo`, { text: "one" })).toMatchObject({ status: 200 });
    expect(first.toolCalls).toBe(1);

    const editedAt = await patch(id, { url: second.url });
    await reaches(stack, id, "connected", 10_000);
    await sleep(Math.max(0, editedAt + STALENESS_MS - Date.now()));
    expect(await stack.callTool(`${name}__echo`, { text: "two" })).toMatchObject({
      status: 200,
      body: { text: "two" },
    });
    expect(second.toolCalls).toBe(1);
    expect(first.toolCalls).toBe(1);
  });

  it("delete → 404 server.not_found within 2 s", async ({ expect }) => {
    const target = await upstream("deleted");
    const name = uniqueName("del");
    const id = await createConnected(stack, { name, url: target.url });
    expect(await stack.callTool(`${name}__echo`, { text: "x" })).toMatchObject({ status: 200 });

    const removed = await stack.call("DELETE", `/v1/servers/${id}`);
    expect(removed.status).toBe(204);
    const deletedAt = Date.now();
    const gone = await waitFor(
      () => stack.callTool(`${name}__echo`, { text: "x" }),
      (r) => r.status !== 200,
      { timeoutMs: STALENESS_MS + MARGIN_MS, intervalMs: 50 },
    );
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ code: "server.not_found" });
    expect(Date.now() - deletedAt).toBeLessThanOrEqual(STALENESS_MS + MARGIN_MS);
    expect((await stack.listTools()).map((t) => t.server)).not.toContain(name);
  });
});
