/**
 * Tenants apart at a stdio server: under `isolation: "per_caller"` each caller principal gets a child
 * of its own (own uid, HOME, TMPDIR; reaped when idle), so one key's process state is invisible to
 * another; and whatever the isolation, a child's request for input (sampling here) reaches only the
 * caller of the call that caused it — one that relates to no single caller's call is refused.
 * Driven through the real gateway stack with official-SDK clients and a real official-SDK child.
 */
import { existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  createServer,
  isAlive,
  type RunnerStack,
  reaches,
  removeBundle,
  startRunnerStack,
  tenantUpstream,
  uniqueName,
  waitFor,
} from "./helpers";

/** A key's caller principal, as the runner names it. */
const principal = (key: { id: string }) => `key:${key.id}`;

/** A client key through the admin API. */
async function createKey(stack: RunnerStack, name: string): Promise<{ id: string; key: string }> {
  const created = await stack.call("POST", "/v1/keys", { name });
  if (created.status !== 201) throw new Error(`POST /v1/keys → ${created.status}`);
  return created.body;
}

/**
 * An SDK client of the gateway's `/mcp` with `key`; with `who`, it declares sampling and answers each
 * request with `from <who>` after `delayMs` (so concurrent calls overlap), recording the prompts asked.
 */
async function connect(stack: RunnerStack, key: string, who?: string, delayMs = 0) {
  const asked: string[] = [];
  const client = new Client(
    { name: `tenant-${who ?? "plain"}`, version: "1.0.0" },
    { capabilities: who ? { sampling: {} } : {} },
  );
  if (who)
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const content = request.params.messages[0]?.content;
      asked.push(content && "text" in content ? String(content.text) : "?");
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { role: "assistant", model: "test", content: { type: "text", text: `from ${who}` } };
    });
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return { client, asked };
}

/** The text of a tool's result. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: Array<{ type: string; text?: string }>;
  };
  return result.content.map((part) => part.text ?? "").join("");
}

describe("runner: each caller its own child, each child's request to its own caller", () => {
  let stack: RunnerStack | undefined;
  const clients: Client[] = [];

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
    await stack?.cleanup();
    stack = undefined;
  });
  afterAll(() => removeBundle());

  /** A stack with the tenant fixture as a server of `isolation`, connected; and two keys. */
  async function setUp(isolation: "shared" | "per_caller", runner: Record<string, unknown> = {}) {
    const entry = await tenantUpstream();
    stack = await startRunnerStack(runner);
    const name = uniqueName("tenant");
    const id = await createServer(stack, {
      name,
      command: process.execPath,
      args: [entry],
      ...(isolation === "per_caller" ? { isolation } : {}),
    });
    await reaches(stack, id, "connected");
    const a = await createKey(stack, "tenant-a");
    const b = await createKey(stack, "tenant-b");
    return { s: stack, id, name, a, b };
  }

  it("per_caller: key A's stored value is invisible to key B; each runs under its own uid and HOME", async () => {
    const { s, id, name, a, b } = await setUp("per_caller");
    const { client: asA } = await connect(s, a.key);
    const { client: asB } = await connect(s, b.key);
    clients.push(asA, asB);

    expect(await call(asA, `${name}__remember`, { value: "alpha-secret" })).toBe("ok");
    expect(await call(asB, `${name}__recall`)).toBe("(nothing)");
    expect(await call(asA, `${name}__recall`)).toBe("alpha-secret");

    const whoA = JSON.parse(await call(asA, `${name}__whoami`));
    const whoB = JSON.parse(await call(asB, `${name}__whoami`));
    expect(whoA.home).not.toBe(whoB.home);
    expect(whoA.tmpdir).not.toBe(whoB.tmpdir);
    if (process.getuid?.() === 0) {
      expect(whoA.uid).not.toBe(0);
      expect(whoB.uid).not.toBe(0);
      expect(whoA.uid).not.toBe(whoB.uid);
    }
    // The runner lists one child per caller (the worker's probe has its own), none shared.
    const callers = (await s.instances())
      .filter((instance) => instance.serverId === id)
      .map((instance) => instance.caller)
      .sort();
    expect(callers).toEqual([principal(a), principal(b), "probe"].sort());
    // Only the runner token's holder names a caller, and only as a principal: anything else is refused.
    expect((await s.runnerCall("POST", `/servers/${id}/callers/nobody/mcp`)).status).toBe(400);
    expect((await s.runnerCall("POST", `/servers/${id}/callers/admin/mcp`, {})).status).toBe(401);
    console.log(`[per_caller] A uid ${whoA.uid} HOME ${whoA.home}; B uid ${whoB.uid} HOME ${whoB.home}`);
  });

  it("per_caller: an idle caller's child is reaped (process and HOME gone); its next call spawns a fresh one", async () => {
    const { s, id, name, a } = await setUp("per_caller", { idleMs: 600 });
    const { client: asA } = await connect(s, a.key);
    clients.push(asA);
    expect(await call(asA, `${name}__remember`, { value: "kept-for-now" })).toBe("ok");
    const mine = (await s.instances()).find((instance) => instance.caller === principal(a));
    const { home } = JSON.parse(await call(asA, `${name}__whoami`));
    expect(mine?.pid).toBeTruthy();
    // Reaping ends the child, then removes its HOME: wait for both.
    await waitFor(
      async () => ({
        live: (await s.instances()).some((instance) => instance.caller === principal(a)),
        home: existsSync(home),
      }),
      (seen) => !seen.live && !seen.home,
      { timeoutMs: 10_000 },
    );
    expect(isAlive(mine?.pid as number)).toBe(false);
    // Reaping one caller's child is not the server's failure; the next call starts afresh.
    expect(await call(asA, `${name}__recall`)).toBe("(nothing)");
    expect((await s.call("GET", `/v1/servers/${id}`)).body.status.state).toBe("connected");
  });

  it("shared: two callers sampling at once are each asked only for their own call", async () => {
    const { s, name, a, b } = await setUp("shared");
    const A = await connect(s, a.key, "A", 300);
    const B = await connect(s, b.key, "B", 300);
    clients.push(A.client, B.client);
    // The child's first request (alone: no overlap) makes the runner keep callers that can be asked apart.
    expect(await call(A.client, `${name}__sample`, { prompt: "first" })).toBe("from A");
    const [gotA, gotB] = await Promise.all([
      call(A.client, `${name}__sample`, { prompt: "for A" }),
      call(B.client, `${name}__sample`, { prompt: "for B" }),
    ]);
    expect(gotA).toBe("from A");
    expect(gotB).toBe("from B");
    expect(A.asked).toEqual(["first", "for A"]);
    expect(B.asked).toEqual(["for B"]);
  });

  it("shared: a child's request while two callers' calls overlap, or while none is in flight, is refused", async () => {
    // A short gate wait, so a second caller's call goes on beside the first (the overlap to test).
    const { s, name, a, b } = await setUp("shared", { gateWaitMs: 200 });
    const A = await connect(s, a.key, "A");
    const B = await connect(s, b.key, "B");
    clients.push(A.client, B.client);
    // Both callers' sessions warm first, so B's call is sure to reach the child while A's holds it.
    await call(A.client, `${name}__recall`);
    await call(B.client, `${name}__recall`);
    // A's call holds the child 3 s; B's sampling call goes on beside it once the gate's wait runs out.
    const [held, gotB] = await Promise.all([
      call(A.client, `${name}__hold`, { ms: 3_000 }),
      new Promise((resolve) => setTimeout(resolve, 100)).then(() =>
        call(B.client, `${name}__sample`, { prompt: "for B" }),
      ),
    ]);
    expect(held).toBe("held");
    // The child's request came while both callers' calls were in flight: refused, asked of neither.
    expect(gotB).toContain("no caller can answer");
    expect(A.asked).toEqual([]);
    expect(B.asked).toEqual([]);

    // A request related to no call: refused, and asked of nobody.
    expect(await call(A.client, `${name}__sample_later`, { ms: 200 })).toBe("scheduled");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await call(A.client, `${name}__late_outcome`)).toContain("no caller can answer");
    expect(A.asked).toEqual([]);
    expect(B.asked).toEqual([]);
  });
});
