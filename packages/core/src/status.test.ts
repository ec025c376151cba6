import { describe, expect, it } from "vitest";
import {
  type AttemptOutcome,
  FailureReason,
  initialStatus,
  listingChanges,
  MAX_LISTING_AGE_MS,
  ServerState,
  ServerStatus,
  type StoredStatus,
  statusAfterAttempt,
  sweepAction,
} from "./status";

const T1 = "2025-01-01T00:00:01.000Z";
const T2 = "2025-01-01T00:00:02.000Z";
const T3 = "2025-01-01T00:00:03.000Z";

const success = (at: string, latencyMs = 120, toolCount = 4): AttemptOutcome => ({
  ok: true,
  at,
  latencyMs,
  toolCount,
});
const failure = (at: string, error = "connect ECONNREFUSED 127.0.0.1:9"): AttemptOutcome => ({
  ok: false,
  at,
  reason: "unreachable",
  error,
});

describe("status model", () => {
  it("has the four states and four reasons", () => {
    // Prepare / Act / Assess
    expect(ServerState.options).toEqual(["connecting", "connected", "failed", "disabled"]);
    expect(FailureReason.options).toEqual(["unreachable", "access_denied", "not_responding", "failed"]);
  });
});

describe("initialStatus", () => {
  it("is connecting with empty diagnostics for an enabled server", () => {
    // Prepare / Act
    const status = initialStatus(true);

    // Assess
    expect(status).toStrictEqual({
      state: "connecting",
      reason: null,
      error: null,
      toolCount: 0,
      lastConnectionAttemptAt: null,
      lastSuccessfulConnectionAt: null,
      lastConnectionFailureAt: null,
      lastConnectionLatencyMs: null,
      lastError: null,
    });
    expect(ServerStatus.parse(status)).toStrictEqual(status);
  });

  it("is disabled with empty diagnostics for a disabled server", () => {
    // Prepare / Act
    const status = initialStatus(false);

    // Assess
    expect(status).toStrictEqual({ ...initialStatus(true), state: "disabled" });
    expect(ServerStatus.parse(status)).toStrictEqual(status);
  });

  it("returns a fresh object each time", () => {
    // Prepare
    const first = initialStatus(true);

    // Act
    first.toolCount = 99;
    const second = initialStatus(true);

    // Assess
    expect(second.toolCount).toBe(0);
  });
});

describe("statusAfterAttempt", () => {
  it("records a first success", () => {
    // Prepare
    const previous = initialStatus(true);

    // Act
    const status = statusAfterAttempt(previous, success(T1, 85, 7));

    // Assess
    expect(status).toStrictEqual({
      state: "connected",
      reason: null,
      error: null,
      toolCount: 7,
      lastConnectionAttemptAt: T1,
      lastSuccessfulConnectionAt: T1,
      lastConnectionFailureAt: null,
      lastConnectionLatencyMs: 85,
      lastError: null,
    });
    expect(ServerStatus.safeParse(status).success).toBe(true);
  });

  it("records a first failure", () => {
    // Prepare
    const previous = initialStatus(true);

    // Act
    const status = statusAfterAttempt(previous, failure(T1, "boom"));

    // Assess
    expect(status).toStrictEqual({
      state: "failed",
      reason: "unreachable",
      error: "boom",
      toolCount: 0,
      lastConnectionAttemptAt: T1,
      lastSuccessfulConnectionAt: null,
      lastConnectionFailureAt: T1,
      lastConnectionLatencyMs: null,
      lastError: "boom",
    });
    expect(ServerStatus.safeParse(status).success).toBe(true);
  });

  it("records a server whose stdio runner was lost as connecting (it moves), the loss in lastError", () => {
    // Prepare
    const connected = statusAfterAttempt(initialStatus(true), success(T1, 85, 7));

    // Act
    const status = statusAfterAttempt(connected, {
      ok: false,
      at: T2,
      reason: "unreachable",
      error: "the stdio runner serving it was lost",
      moving: true,
    });

    // Assess
    expect(status).toStrictEqual({
      state: "connecting",
      reason: null,
      error: null,
      toolCount: 0,
      lastConnectionAttemptAt: T2,
      lastSuccessfulConnectionAt: T1,
      lastConnectionFailureAt: T2,
      lastConnectionLatencyMs: 85,
      lastError: "the stdio runner serving it was lost",
    });
    expect(ServerStatus.safeParse(status).success).toBe(true);
  });

  it("keeps the last success and its latency through a later failure", () => {
    // Prepare
    const connected = statusAfterAttempt(initialStatus(true), success(T1, 85, 7));

    // Act
    const status = statusAfterAttempt(connected, failure(T2, "timed out"));

    // Assess
    expect(status).toStrictEqual({
      state: "failed",
      reason: "unreachable",
      error: "timed out",
      toolCount: 0,
      lastConnectionAttemptAt: T2,
      lastSuccessfulConnectionAt: T1,
      lastConnectionFailureAt: T2,
      lastConnectionLatencyMs: 85,
      lastError: "timed out",
    });
  });

  it("keeps the last failure and last error through a later success, clearing the current error", () => {
    // Prepare
    const failed = statusAfterAttempt(initialStatus(true), failure(T1, "refused"));

    // Act
    const status = statusAfterAttempt(failed, success(T2, 40, 3));

    // Assess
    expect(status).toStrictEqual({
      state: "connected",
      reason: null,
      error: null,
      toolCount: 3,
      lastConnectionAttemptAt: T2,
      lastSuccessfulConnectionAt: T2,
      lastConnectionFailureAt: T1,
      lastConnectionLatencyMs: 40,
      lastError: "refused",
    });
  });

  it("tracks the latest of each across a success, failure, success sequence", () => {
    // Prepare
    const first = statusAfterAttempt(initialStatus(true), success(T1, 100, 2));
    const second = statusAfterAttempt(first, failure(T2, "gone"));

    // Act
    const third = statusAfterAttempt(second, success(T3, 50, 5));

    // Assess
    expect(third).toMatchObject({
      state: "connected",
      toolCount: 5,
      lastConnectionAttemptAt: T3,
      lastSuccessfulConnectionAt: T3,
      lastConnectionFailureAt: T2,
      lastConnectionLatencyMs: 50,
      lastError: "gone",
    });
  });

  it("replaces the previous failure on a repeated failure", () => {
    // Prepare
    const failed = statusAfterAttempt(initialStatus(true), failure(T1, "first"));

    // Act
    const status = statusAfterAttempt(failed, {
      ok: false,
      at: T2,
      reason: "access_denied",
      error: "HTTP 401",
    });

    // Assess
    expect(status).toMatchObject({
      state: "failed",
      reason: "access_denied",
      error: "HTTP 401",
      lastConnectionFailureAt: T2,
      lastError: "HTTP 401",
    });
  });

  it.each(FailureReason.options)("carries the failure reason %s", (reason) => {
    // Prepare
    const previous = initialStatus(true);

    // Act
    const status = statusAfterAttempt(previous, { ok: false, at: T1, reason, error: "e" });

    // Assess
    expect(status.reason).toBe(reason);
    expect(status.state).toBe("failed");
  });

  it("a success shows the protocol revision its session reported; a failure keeps it", () => {
    // Prepare
    const profile = { protocolVersion: "2026-07-28", capabilities: { tools: {} } };

    // Act
    const connected = statusAfterAttempt(initialStatus(true), success(T1), profile);
    const failed = statusAfterAttempt(connected, failure(T2));
    const unreported = statusAfterAttempt(failed, success(T3));

    // Assess
    expect(connected.protocolVersion).toBe("2026-07-28");
    expect(ServerStatus.parse(connected)).toStrictEqual(connected);
    expect(failed.protocolVersion).toBe("2026-07-28");
    expect(unreported.protocolVersion).toBe("2026-07-28");
    expect(statusAfterAttempt(initialStatus(true), success(T1))).not.toHaveProperty("protocolVersion");
  });

  it("a success shows the eras its profile found: the negotiated revision, then a 2025 surface's", () => {
    // Prepare
    const legacy = { protocolVersion: "2025-11-25", capabilities: { completions: {} } };
    const profile = { protocolVersion: "2026-07-28", capabilities: { tools: {} }, legacy };

    // Act
    const dual = statusAfterAttempt(initialStatus(true), success(T1), profile);
    const single = statusAfterAttempt(dual, success(T2), { protocolVersion: "2025-06-18", capabilities: {} });

    // Assess
    expect(dual.eras).toEqual(["2026-07-28", "2025-11-25"]);
    expect(ServerStatus.parse(dual)).toStrictEqual(dual);
    expect(single.eras).toEqual(["2025-06-18"]);
  });

  it("connects a server whose previous status was disabled", () => {
    // Prepare
    const previous = initialStatus(false);

    // Act
    const status = statusAfterAttempt(previous, success(T1));

    // Assess
    expect(status.state).toBe("connected");
  });

  it("does not modify the previous status", () => {
    // Prepare
    const previous = statusAfterAttempt(initialStatus(true), success(T1));
    const before = structuredClone(previous);

    // Act
    statusAfterAttempt(previous, failure(T2));

    // Assess
    expect(previous).toStrictEqual(before);
  });
});

describe("sweepAction", () => {
  const now = Date.parse("2026-12-01T10:00:00.000Z");
  const ago = (ms: number) => new Date(now - ms).toISOString();
  const options = { staleMs: 60_000, graceMs: 2_000 };
  const stored = (changes: Partial<StoredStatus>): StoredStatus => ({
    ...initialStatus(true),
    generation: 3,
    supersededAt: ago(10_000),
    ...changes,
  });

  it("disables a status that says otherwise when the config is disabled (a lost write)", () => {
    expect(sweepAction(false, stored({ state: "connecting" }), ago(0), now, options)).toBe("disable");
    expect(sweepAction(false, stored({ state: "connected" }), ago(0), now, options)).toBe("disable");
    expect(sweepAction(false, stored({ state: "disabled" }), ago(0), now, options)).toBeUndefined();
  });

  it("enables a disabled status when the config is enabled", () => {
    expect(sweepAction(true, stored({ state: "disabled" }), ago(0), now, options)).toBe("enable");
  });

  it("re-sends the connect job of a generation no attempt has started since, after the grace", () => {
    const lost = stored({ state: "connecting", lastConnectionAttemptAt: ago(30_000) });
    const fresh = stored({ state: "connecting", supersededAt: ago(500), lastConnectionAttemptAt: null });
    const started = stored({ state: "connecting", lastConnectionAttemptAt: ago(5_000) });

    expect(sweepAction(true, lost, ago(0), now, options)).toBe("connect");
    expect(sweepAction(true, fresh, ago(0), now, options)).toBeUndefined();
    expect(sweepAction(true, started, ago(0), now, options)).toBeUndefined();
  });

  it("probes connected servers, and nothing at all without a status (deleted)", () => {
    expect(sweepAction(true, stored({ state: "connected" }), ago(0), now, options)).toBe("probe");
    expect(sweepAction(true, undefined, ago(0), now, options)).toBeUndefined();
  });

  it("checks a connected server whose tools were listed lately; re-lists them once they are old", () => {
    const listed = (ms: number) => stored({ state: "connected", toolsListedAt: ago(ms) });

    expect(sweepAction(true, listed(60_000), ago(0), now, options)).toBe("check");
    expect(sweepAction(true, listed(MAX_LISTING_AGE_MS - 1), ago(0), now, options)).toBe("check");
    expect(sweepAction(true, listed(MAX_LISTING_AGE_MS), ago(0), now, options)).toBe("probe");
    expect(sweepAction(true, listed(60_000), ago(0), now, { ...options, maxListingAgeMs: 30_000 })).toBe(
      "probe",
    );
    // Only connected servers are checked: a failed one keeps its retry chain (or a stale probe)
    const failedLately = stored({
      state: "failed",
      toolsListedAt: ago(1_000),
      lastConnectionAttemptAt: ago(0),
    });
    expect(sweepAction(true, failedLately, ago(0), now, options)).toBeUndefined();
  });
});

describe("listingChanges", () => {
  it("records when the tools were listed and the digest of the profile seen", () => {
    const profile = { protocolVersion: "2026-07-28", capabilities: {} };

    expect(listingChanges(T1, profile)).toEqual({ toolsListedAt: T1, profileDigest: expect.any(String) });
    expect(listingChanges(T2, profile).profileDigest).toBe(listingChanges(T1, profile).profileDigest);
    expect(listingChanges(T1, undefined).profileDigest).not.toBe(listingChanges(T1, profile).profileDigest);
  });
});
