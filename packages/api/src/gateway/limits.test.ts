import { type CallerLimitSettings, DEFAULT_CALLER_LIMITS, type RateBudget } from "@mcpgw/aws";
import { createMemoryStore } from "@mcpgw/aws/memory";
import { AppError, type AuditEvent, createLogger } from "@mcpgw/core";
import { metricsForTest } from "@mcpgw/telemetry";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv, Principal } from "../env";
import {
  CallerLimits,
  calledToolOf,
  effectiveLimits,
  limitRequests,
  SharedShare,
  sliceOf,
  TokenBucket,
} from "./limits";

const quiet = createLogger({ level: "error", sink: () => {} });
const keyA: Principal = { kind: "key", keyId: "key-a", serverIds: null };
const keyB: Principal = { kind: "key", keyId: "key-b", serverIds: null };
const settings: CallerLimitSettings = { perMinute: 60, burst: 5, concurrent: 2, sessions: 3, streams: 2 };

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** The refusal `admit` threw (fails the test when it admitted). */
async function refused(admitted: Promise<unknown>): Promise<AppError> {
  const error = await admitted.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("token bucket", () => {
  it("gives its capacity at once, then one token per 60/perMinute s, and says how long to wait", () => {
    const bucket = new TokenBucket(3, 0);
    expect([0, 0, 0].map(() => bucket.take(0, 3, 60))).toEqual([0, 0, 0]);
    expect(bucket.take(0, 3, 60)).toBe(1_000);
    expect(bucket.take(400, 3, 60)).toBe(600);
    expect(bucket.take(1_000, 3, 60)).toBe(0);
    // A long pause refills it to its capacity, no more.
    expect([0, 0, 0, 0].map(() => bucket.take(60_000, 3, 60))).toEqual([0, 0, 0, 1_000]);
  });
});

describe("effective limits", () => {
  it("a key's own fields go before the global ones, and the burst never passes the rate", () => {
    expect(effectiveLimits(DEFAULT_CALLER_LIMITS, null)).toEqual({
      perMinute: DEFAULT_CALLER_LIMITS.perMinute,
      burst: DEFAULT_CALLER_LIMITS.burst,
      concurrent: DEFAULT_CALLER_LIMITS.concurrent,
    });
    expect(effectiveLimits(DEFAULT_CALLER_LIMITS, { perMinute: 600, concurrent: 4 })).toEqual({
      perMinute: 600,
      burst: DEFAULT_CALLER_LIMITS.burst,
      concurrent: 4,
    });
    expect(effectiveLimits(DEFAULT_CALLER_LIMITS, { perMinute: 10 }).burst).toBe(10);
  });
});

describe("caller limits", () => {
  it("a burst past the bucket is refused with the rate limit and a whole-second retryAfter; another key is untouched", async () => {
    const time = clock();
    const limits = new CallerLimits(settings, undefined, quiet, time.now);
    for (let i = 0; i < 5; i++) (await limits.admit(keyA, "call"))();

    const error = await refused(limits.admit(keyA, "call"));
    expect(error.code).toBe("rate_limited");
    expect(error.status).toBe(429);
    expect(error.extra).toEqual({ limit: "rate", retryAfter: 1 });
    expect(error.detail).toContain("60 calls per minute");
    (await limits.admit(keyB, "call"))();
    time.advance(1_000);
    (await limits.admit(keyA, "call"))();
  });

  it("each refusal counts in mcpgw_rate_limited_total by its limit", async () => {
    const recorded = metricsForTest();
    try {
      const limits = new CallerLimits(settings, undefined, quiet, clock().now);
      for (let i = 0; i < 5; i++) (await limits.admit(keyA, "call"))();
      await refused(limits.admit(keyA, "call"));
      await refused(limits.admit(keyA, "call"));
      const held = [await limits.admit(keyB, "call"), await limits.admit(keyB, "call")];
      await refused(limits.admit(keyB, "call"));
      for (const end of held) end();

      const text = await recorded.text();
      expect(text).toContain('mcpgw_rate_limited_total{limit="rate"} 2');
      expect(text).toContain('mcpgw_rate_limited_total{limit="concurrency"} 1');
    } finally {
      await recorded.stop();
    }
  });

  it("a key's own rateLimit replaces the global one", async () => {
    const limits = new CallerLimits(settings, undefined, quiet, clock().now);
    const generous: Principal = { ...keyA, rateLimit: { perMinute: 600, burst: 20 } };
    for (let i = 0; i < 20; i++) (await limits.admit(generous, "call"))();
    expect((await refused(limits.admit(generous, "call"))).extra).toEqual({ limit: "rate", retryAfter: 1 });
  });

  it("refuses the call past the concurrency limit until one ends; ending twice frees one", async () => {
    const limits = new CallerLimits(settings, undefined, quiet, clock().now);
    const first = await limits.admit(keyA, "call");
    await limits.admit(keyA, "call");

    expect((await refused(limits.admit(keyA, "call"))).extra).toMatchObject({ limit: "concurrency" });
    first();
    first();
    const third = await limits.admit(keyA, "call");
    expect((await refused(limits.admit(keyA, "call"))).extra).toMatchObject({ limit: "concurrency" });
    third();
  });

  it("calls waiting on the first lease already count against the concurrency limit", async () => {
    let grant: (got: number) => void = () => undefined;
    const slow: RateBudget = { lease: () => new Promise<number>((resolve) => (grant = resolve)) };
    const limits = new CallerLimits(settings, slow, quiet, clock().now);
    const waiting = [limits.admit(keyA, "call"), limits.admit(keyA, "call")];

    expect((await refused(limits.admit(keyA, "call"))).extra).toMatchObject({ limit: "concurrency" });
    grant(10);
    for (const release of await Promise.all(waiting)) release();
  });

  it("counts standing streams apart from calls, up to their cap", async () => {
    const limits = new CallerLimits(settings, undefined, quiet, clock().now);
    const streams = [await limits.admit(keyA, "stream"), await limits.admit(keyA, "stream")];

    expect((await refused(limits.admit(keyA, "stream"))).extra).toMatchObject({ limit: "streams" });
    (await limits.admit(keyA, "call"))();
    (await limits.admit(keyB, "stream"))();
    streams[0]?.();
    (await limits.admit(keyA, "stream"))();
  });

  it("never limits the admin token; users are limited by their subject", async () => {
    const limits = new CallerLimits(settings, undefined, quiet, clock().now);
    for (let i = 0; i < 50; i++) await limits.admit({ kind: "admin" }, "call");
    const ada: Principal = { kind: "user", sub: "ada", serverIds: null };
    for (let i = 0; i < 5; i++) (await limits.admit(ada, "call"))();

    expect((await refused(limits.admit(ada, "call"))).code).toBe("rate_limited");
    expect(limits.capOf("admin")).toBe(Number.POSITIVE_INFINITY);
    expect(limits.capOf("key-a")).toBe(3);
    expect(limits.refusal(3).extra).toEqual({ limit: "sessions", retryAfter: 1 });
  });

  it("two instances on one shared budget admit the caller's minute between them, not each", async () => {
    const store = createMemoryStore();
    const time = clock(60_000 * 100);
    const wide = { ...settings, burst: 60, concurrent: 100 };
    const instances = [0, 1].map(() => new CallerLimits(wide, store.rateBudget, quiet, time.now));
    let admitted = 0;
    for (let i = 0; i < 100; i++) {
      const limits = instances[i % 2] as CallerLimits;
      await limits.admit(keyA, "call").then(
        (release) => {
          admitted++;
          release();
        },
        () => undefined,
      );
    }
    expect(admitted).toBe(60);
    const error = await refused((instances[0] as CallerLimits).admit(keyA, "call"));
    expect(error.extra).toMatchObject({ limit: "rate" });
    // The minute turns: the budget is there again.
    time.advance(60_000);
    (await (instances[1] as CallerLimits).admit(keyA, "call"))();
  });
});

describe("an instance's share of the shared budget", () => {
  it("a warm call awaits no lease: the next slice is leased while half the last is still there", async () => {
    const leases: Array<{ want: number; resolve: (got: number) => void }> = [];
    const share = new SharedShare(
      (_window, want) => new Promise<number>((resolve) => leases.push({ want, resolve })),
      () => undefined,
    );
    const slice = sliceOf(600);
    const cold = share.spend(0, 600);
    expect(leases).toHaveLength(1);
    leases[0]?.resolve(slice);
    expect(await cold).toBe(0);

    // Spent down to half the slice: one lease under way, and every call answered at once meanwhile.
    for (let i = 1; i < slice; i++) {
      const spent = share.spend(1, 600);
      expect(await Promise.race([spent, Promise.resolve("waiting")])).toBe(0);
    }
    expect(leases).toHaveLength(2);
  });

  it("calls that arrive together on an empty share all wait for leases, even one token at a time", async () => {
    let used = 0;
    const share = new SharedShare(
      async (_window, want, limit) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        used += want;
        return Math.max(0, Math.min(want, limit - (used - want)));
      },
      () => undefined,
    );
    expect(await Promise.all([0, 1, 2, 3].map(() => share.spend(0, 10)))).toEqual([0, 0, 0, 0]);
  });

  it("a spent minute refuses until it turns without asking again; an unreachable budget lets the instance's own limit rule", async () => {
    let asked = 0;
    const spent = new SharedShare(
      async () => {
        asked++;
        return 0;
      },
      () => undefined,
    );
    expect(await spent.spend(30_000, 60)).toBe(30_000);
    expect(await spent.spend(45_000, 60)).toBe(15_000);
    expect(asked).toBe(1);

    const errors: unknown[] = [];
    const unreachable: RateBudget["lease"] = async () => {
      throw new Error("no table");
    };
    const share = new SharedShare(
      (window, want, limit) => unreachable("c", window, want, limit),
      (error) => errors.push(error),
    );
    expect(await share.spend(0, 60)).toBe(0);
    expect(errors).toHaveLength(1);
  });
});

describe("a refused REST tool call's audit", () => {
  it("names the tool percent-decoded, as it stands when an escape is malformed", () => {
    expect(calledToolOf("POST", "/v1/tools/files__read%20me/call")).toBe("files__read me");
    expect(calledToolOf("POST", "/v1/tools/files__%E0%A4/call")).toBe("files__%E0%A4");
    expect(calledToolOf("GET", "/v1/tools/files__read/call")).toBeUndefined();
    expect(calledToolOf("POST", "/v1/tools")).toBeUndefined();
  });

  it("a caller over its limit calling a name with a malformed escape is refused (429) and audited", async () => {
    const events: AuditEvent[] = [];
    const limits = new CallerLimits({ ...settings, perMinute: 1, burst: 1 }, undefined, quiet);
    const app = new Hono<AppEnv>();
    app.onError((error, c) =>
      error instanceof AppError ? c.json({ code: error.code }, 429) : c.json({ code: "internal" }, 500),
    );
    app.use(async (c, next) => {
      c.set("principal", keyA);
      await next();
    });
    app.use(limitRequests(limits, { audit: { record: (event) => events.push(event) } }));
    app.post("/v1/tools/:name/call", (c) => c.json({ ok: true }));
    const call = () => app.request("/v1/tools/files__%E0%A4/call", { method: "POST" });
    expect((await call()).status).toBe(200);
    const refusedCall = await call();
    expect([refusedCall.status, await refusedCall.json()]).toEqual([429, { code: "rate_limited" }]);
    expect(events).toEqual([
      expect.objectContaining({ serverName: "files", tool: "%E0%A4", outcome: "rate_limited" }),
    ]);
  });
});
