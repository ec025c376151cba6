import { describe, expect, it } from "vitest";
import {
  failureCountAfter,
  MAX_RETRY_DELAY_SECONDS,
  RETRY_JITTER,
  retryDelaySeconds,
  visibleNextAttempt,
} from "./backoff";
import { isSpentConnect } from "./job";

const noJitter = { random: () => 0 };
const mostJitter = { random: () => 0.999_999 };

describe("retryDelaySeconds", () => {
  it("backs off 15 s, 30 s, 1 min, 2 min, 4 min, then stays at the 5 min cap", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryDelaySeconds(n, noJitter));

    expect(delays).toEqual([15, 30, 60, 120, 240, 300, 300, 300]);
    expect(MAX_RETRY_DELAY_SECONDS).toBe(300);
  });

  it("jitters every delay but the first retry's down by at most a fifth, never past the cap", () => {
    for (let n = 2; n <= 10; n++) {
      const nominal = retryDelaySeconds(n, noJitter);
      const jittered = retryDelaySeconds(n, mostJitter);
      expect(jittered).toBeLessThanOrEqual(nominal);
      expect(jittered).toBeGreaterThanOrEqual(Math.floor(nominal * (1 - RETRY_JITTER)));
      expect(jittered).toBeLessThan(nominal);
    }
    expect(retryDelaySeconds(1, mostJitter)).toBe(15);
  });

  it("sends a deterministic failure to the cap at once (jittered)", () => {
    expect(retryDelaySeconds(1, { ...noJitter, deterministic: true })).toBe(300);
    expect(retryDelaySeconds(1, { ...mostJitter, deterministic: true })).toBeGreaterThanOrEqual(240);
  });

  it("takes its base and cap from the deployment's knobs, the cap bounded by SQS's 900 s", () => {
    expect(
      [1, 2, 3, 4, 5].map((n) => retryDelaySeconds(n, { ...noJitter, baseSeconds: 1, capSeconds: 4 })),
    ).toEqual([1, 2, 4, 4, 4]);
    expect(retryDelaySeconds(40, { ...noJitter, capSeconds: 5_000 })).toBe(900);
    expect(retryDelaySeconds(3, { ...mostJitter, baseSeconds: 0 })).toBe(0);
    expect(retryDelaySeconds(3, { ...mostJitter, baseSeconds: 1, capSeconds: 1 })).toBe(1);
  });
});

describe("failureCountAfter", () => {
  const due = "2026-01-01T00:01:00.000Z";
  const retried = "2026-01-01T00:01:00.500Z";
  const early = "2026-01-01T00:00:20.000Z";

  it("steps on while failed: a failure of the retry (due or later) is one more in a row", () => {
    expect(failureCountAfter({ state: "failed", failureCount: 4, nextAttemptAt: due }, retried)).toBe(5);
    expect(failureCountAfter({ state: "failed", failureCount: 4, nextAttemptAt: due }, due)).toBe(5);
    expect(failureCountAfter({ state: "failed", nextAttemptAt: null }, retried)).toBe(2);
    expect(
      failureCountAfter({ state: "failed", failureCount: Number.NaN, nextAttemptAt: due }, retried),
    ).toBe(2);
  });

  it("counts the same outage seen again before the retry was due (a call and a check at once) once", () => {
    expect(failureCountAfter({ state: "failed", failureCount: 1, nextAttemptAt: due }, early)).toBe(1);
    expect(failureCountAfter({ state: "failed", failureCount: 3, nextAttemptAt: due }, early)).toBe(3);
  });

  it("starts again at one after a success or a new generation (connecting)", () => {
    expect(failureCountAfter({ state: "connecting", failureCount: 4, nextAttemptAt: due }, retried)).toBe(1);
    expect(failureCountAfter({ state: "connected", failureCount: 4, nextAttemptAt: null }, retried)).toBe(1);
    expect(failureCountAfter(undefined, retried)).toBe(1);
  });
});

describe("visibleNextAttempt", () => {
  it("shows the retry's time for a failed server, null for any other state", () => {
    const at = "2026-01-01T00:05:00.000Z";
    expect(visibleNextAttempt({ state: "failed", nextAttemptAt: at })).toBe(at);
    expect(visibleNextAttempt({ state: "connecting", nextAttemptAt: at })).toBeNull();
    expect(visibleNextAttempt({ state: "connected", nextAttemptAt: null })).toBeNull();
  });
});

describe("isSpentConnect", () => {
  const began = "2026-01-01T00:00:00.000Z";
  const job = { type: "connect" as const, serverId: "s", generation: 2 };

  it("drops a connect whose generation was attempted already; keeps a first one and other jobs", () => {
    const attempted = { supersededAt: began, lastConnectionAttemptAt: "2026-01-01T00:00:01.000Z" };
    const before = { supersededAt: began, lastConnectionAttemptAt: "2025-12-31T23:59:59.000Z" };

    expect(isSpentConnect(job, attempted)).toBe(true);
    expect(isSpentConnect(job, before)).toBe(false);
    expect(isSpentConnect(job, { supersededAt: began, lastConnectionAttemptAt: null })).toBe(false);
    expect(isSpentConnect(job, { supersededAt: null, lastConnectionAttemptAt: began })).toBe(false);
    expect(isSpentConnect({ ...job, type: "retry" }, attempted)).toBe(false);
  });
});
