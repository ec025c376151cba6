/**
 * Limits per caller, from outside with real keys: a burst from one key is refused (429 `rate_limited`,
 * `Retry-After`) while another key's calls all go through; a key's own `rateLimit` replaces the global
 * one; the call past the concurrency limit is refused while slow calls run; on the MCP endpoints the
 * refusal is a JSON-RPC error -32029 with `retryAfter`, read by SDK clients of both eras; and a key's
 * open sessions and standing streams are capped while another key still opens its own.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { connectTestClient } from "../mcp/clients";
import { type CreatedKey, INITIALIZE, rawRequest } from "../mcp/helpers";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "./helpers";

/** The global limits of this suite's gateway: small, so a test reaches them in a moment. */
const LIMITS = { perMinute: 60, burst: 20, concurrent: 8, sessions: 3, streams: 2 };

describe("limits per caller", () => {
  let stack: Stack;
  let upstream: Upstream;
  const server = uniqueName("lim");

  /** A key made through the admin API, with its own `rateLimit` when given. */
  async function newKey(name: string, rateLimit?: Record<string, number>): Promise<CreatedKey> {
    const created = await stack.call("POST", "/v1/keys", { name, ...(rateLimit ? { rateLimit } : {}) });
    if (created.status !== 201) throw new Error(`POST /v1/keys → ${created.status}`);
    return created.body as CreatedKey;
  }

  /** `POST /v1/tools/{server}__{tool}/call` as `key`. */
  function call(key: string, tool = "echo", args: Record<string, unknown> = { text: "hi" }) {
    return stack.request("POST", `/v1/tools/${server}__${tool}/call`, {
      body: { arguments: args },
      headers: { authorization: `Bearer ${key}` },
    });
  }

  /** `count` calls as `key`, `workers` at a time: their statuses and how long they took. */
  async function burst(key: string, count: number, workers: number) {
    const statuses: number[] = [];
    const refusals: Array<{ retryAfter: string | null; body: Record<string, unknown> }> = [];
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (next++ < count) {
          const answer = await call(key);
          statuses.push(answer.status);
          if (answer.status === 429)
            refusals.push({ retryAfter: answer.headers.get("retry-after"), body: answer.body });
        }
      }),
    );
    const elapsedMs = Math.round(performance.now() - started);
    const accepted = statuses.filter((status) => status === 200).length;
    return { statuses, refusals, accepted, refused: statuses.length - accepted, elapsedMs };
  }

  beforeAll(async () => {
    [stack, upstream] = await Promise.all([
      startGatewayStack({ limits: LIMITS }),
      startUpstream({ name: "limits-upstream" }),
    ]);
    await createConnected(stack, { name: server, url: upstream.url });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it("a burst from key A is refused with 429 rate_limited and Retry-After; key B's calls all succeed", async ({
    expect,
  }) => {
    const [a, b] = await Promise.all([newKey("tenant A"), newKey("tenant B")]);

    const [fromA, fromB] = await Promise.all([burst(a.key, 200, 8), burst(b.key, 15, 1)]);
    console.log(
      `burst: key A ${fromA.accepted} accepted / ${fromA.refused} refused of 200 in ${fromA.elapsedMs} ms; key B ${fromB.accepted} accepted / ${fromB.refused} refused of 15 in ${fromB.elapsedMs} ms (limit ${LIMITS.perMinute}/min, burst ${LIMITS.burst})`,
    );

    expect(fromB.accepted).toBe(15);
    // The burst, and at most what a second or two of refill adds (one call a second).
    expect(fromA.accepted).toBeGreaterThanOrEqual(LIMITS.burst);
    expect(fromA.accepted).toBeLessThanOrEqual(LIMITS.burst + Math.ceil(fromA.elapsedMs / 1_000) + 1);
    expect(fromA.refused).toBe(200 - fromA.accepted);
    const refusal = fromA.refusals[0];
    expect(refusal?.body).toMatchObject({
      code: "rate_limited",
      status: 429,
      limit: "rate",
      retryAfter: expect.any(Number),
    });
    expect(Number(refusal?.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refusal?.retryAfter).toBe(String(refusal?.body.retryAfter));
    // The admin token is not a tenant: never limited.
    const admin = await Promise.all(
      Array.from({ length: 40 }, () => stack.callTool(`${server}__echo`, { text: "hi" })),
    );
    expect(admin.map(({ status }) => status)).toEqual(Array(40).fill(200));
  });

  it("a key's own rateLimit replaces the global one, both ways", async ({ expect }) => {
    const [generous, strict] = await Promise.all([
      newKey("generous", { perMinute: 6_000, burst: 50 }),
      newKey("strict", { perMinute: 5 }),
    ]);
    const listed = await stack.call("GET", "/v1/keys");
    expect(listed.body.keys.find((key: { id: string }) => key.id === strict.id)?.rateLimit).toEqual({
      perMinute: 5,
    });

    const many = await burst(generous.key, 45, 1);
    const few = await burst(strict.key, 8, 1);
    console.log(
      `own limits: generous key ${many.accepted}/45 accepted (global burst ${LIMITS.burst}); strict key (5/min) ${few.accepted}/8 accepted`,
    );

    expect(many.accepted).toBe(45);
    expect(few.accepted).toBe(5);
    expect(few.refusals[0]?.body.detail).toContain("5 calls per minute");
  });

  it("takes a rateLimit of whole positive numbers of the known fields, and refuses any other", async ({
    expect,
  }) => {
    const rateLimit = { perMinute: 600, burst: 60, concurrent: 16 };
    const made = await stack.call("POST", "/v1/keys", { name: "shaped", rateLimit });
    expect(made.status).toBe(201);
    expect(made.body.rateLimit).toEqual(rateLimit);
    const global = await stack.call("POST", "/v1/keys", { name: "global", rateLimit: null });
    expect(global.status).toBe(201);
    expect(global.body.rateLimit).toBeNull();
    for (const bad of [{ perMinute: 0 }, { perMinute: 1.5 }, { burst: "10" }, { perSecond: 3 }]) {
      const answer = await stack.call("POST", "/v1/keys", { name: "bad", rateLimit: bad });
      expect(answer.status, JSON.stringify(bad)).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
    }
  });

  it("refuses the call past the concurrency limit while slow calls run, and takes calls again after", async ({
    expect,
  }) => {
    const key = await newKey("two at once", { concurrent: 2 });
    const slow = [call(key.key, "slow", { ms: 1_500 }), call(key.key, "slow", { ms: 1_500 })];
    await new Promise((resolve) => setTimeout(resolve, 300));

    const third = await call(key.key);
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ code: "rate_limited", limit: "concurrency" });
    expect(third.headers.get("retry-after")).toBe("1");
    expect((await Promise.all(slow)).map(({ status }) => status)).toEqual([200, 200]);
    expect((await call(key.key)).status).toBe(200);
  });

  it.for(["v1", "v2-modern"] as const)(
    "on /mcp a %s SDK client gets JSON-RPC error -32029 with retryAfter once over the rate",
    async (flavour, { expect }) => {
      const key = await newKey(`mcp ${flavour}`, { perMinute: 10 });
      const client = await connectTestClient(flavour, `${stack.api.url}/mcp`, { key: key.key });
      try {
        let answered = 0;
        let refusal: unknown;
        for (let i = 0; i < 12 && refusal === undefined; i++) {
          await client.callTool(`${server}__echo`, { text: "hi" }).then(
            () => answered++,
            (error: unknown) => (refusal = error),
          );
        }
        console.log(`MCP ${flavour}: ${answered} calls answered before the refusal`);
        expect(answered).toBeGreaterThan(0);
        expect(refusal).toMatchObject({
          code: -32029,
          data: { code: "rate_limited", limit: "rate", retryAfter: expect.any(Number) },
        });
        expect((refusal as { data: { retryAfter: number } }).data.retryAfter).toBeGreaterThanOrEqual(1);
      } finally {
        await client.close();
      }
    },
  );

  /** Opens a 2025 session on `/mcp` as `key` with a raw initialize: its answer and its session id. */
  async function openSession(key: string) {
    const answer = await rawRequest(`${stack.api.url}/mcp`, {
      headers: { authorization: `Bearer ${key}` },
      body: INITIALIZE,
    });
    return { ...answer, sessionId: answer.headers["mcp-session-id"] as string | undefined };
  }

  it("caps a key's open MCP sessions without touching another key's; a session ended frees its place", async ({
    expect,
  }) => {
    const [a, b] = await Promise.all([newKey("sessions A"), newKey("sessions B")]);
    const opened = [];
    for (let i = 0; i < LIMITS.sessions; i++) opened.push(await openSession(a.key));
    expect(opened.map(({ sessionId }) => typeof sessionId)).toEqual(Array(LIMITS.sessions).fill("string"));

    const excess = await openSession(a.key);
    const fromB = await openSession(b.key);
    console.log(
      `sessions: key A ${opened.length} opened, the next answered ${excess.status} ${excess.body?.error?.code}; key B opened one: ${Boolean(fromB.sessionId)}`,
    );
    // A refused initialize is answered as a JSON-RPC request is: its error, which SDK clients read.
    expect(excess.status).toBe(200);
    expect(excess.sessionId).toBeUndefined();
    expect(excess.headers["retry-after"]).toBe("1");
    expect(excess.body).toMatchObject({
      id: INITIALIZE.id,
      error: { code: -32029, data: { code: "rate_limited", limit: "sessions", retryAfter: 1 } },
    });
    expect(fromB.sessionId).toEqual(expect.any(String));
    // An SDK client of key A is refused the same way at connect.
    await expect(connectTestClient("v1", `${stack.api.url}/mcp`, { key: a.key })).rejects.toMatchObject({
      code: -32029,
    });

    const ended = await rawRequest(`${stack.api.url}/mcp`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${a.key}`, "mcp-session-id": opened[0]?.sessionId as string },
    });
    expect(ended.status).toBe(200);
    expect((await openSession(a.key)).sessionId).toEqual(expect.any(String));
  });

  it("caps a key's standing streams with 429 while another key opens its own; a stream closed frees its place", async ({
    expect,
  }) => {
    const [a, b] = await Promise.all([newKey("streams A"), newKey("streams B")]);
    const aborts: AbortController[] = [];
    /** Opens the GET stream of session `sessionId` as `key`: its status, Retry-After and (refused) body. */
    async function openStream(key: string, sessionId: string | undefined) {
      const abort = new AbortController();
      aborts.push(abort);
      const response = await fetch(`${stack.api.url}/mcp`, {
        headers: {
          authorization: `Bearer ${key}`,
          accept: "text/event-stream",
          "mcp-session-id": sessionId as string,
          "mcp-protocol-version": INITIALIZE.params.protocolVersion,
        },
        signal: abort.signal,
      });
      const body = response.status === 200 ? undefined : await response.json();
      return { status: response.status, retryAfter: response.headers.get("retry-after"), body, abort };
    }
    try {
      const sessions = [];
      for (let i = 0; i < LIMITS.streams + 1; i++) sessions.push((await openSession(a.key)).sessionId);
      const open = [];
      for (let i = 0; i < LIMITS.streams; i++) open.push(await openStream(a.key, sessions[i]));
      expect(open.map(({ status }) => status)).toEqual(Array(LIMITS.streams).fill(200));

      const excess = await openStream(a.key, sessions[LIMITS.streams]);
      const fromB = await openStream(b.key, (await openSession(b.key)).sessionId);
      console.log(
        `streams: key A ${open.length} open, the next answered ${excess.status}; key B's answered ${fromB.status}`,
      );
      expect(excess.status).toBe(429);
      expect(excess.retryAfter).toBe("1");
      expect(excess.body).toMatchObject({
        id: null,
        error: { code: -32029, data: { code: "rate_limited", limit: "streams", retryAfter: 1 } },
      });
      expect(fromB.status).toBe(200);

      open[0]?.abort.abort();
      let again = 0;
      for (let i = 0; i < 10 && again !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        again = (await openStream(a.key, sessions[LIMITS.streams])).status;
      }
      expect(again).toBe(200);
    } finally {
      for (const abort of aborts) abort.abort();
    }
  });
});
