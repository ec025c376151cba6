/**
 * Limits per caller (a key, a user signed in through OAuth) on the data plane: a call rate (a token
 * bucket: `burst` at once, refilled at `perMinute`), calls in flight at once, and standing streams open
 * at once; a key's own `rateLimit` goes before the global settings, field by field. The admin token is
 * not limited: it is the operator's own credential, the one that must still work while a tenant misbehaves.
 *
 * Across instances the rate holds through a shared budget per caller and minute ({@link RateBudget}):
 * an instance leases a slice of it and spends the slice here, leasing the next one before the last is
 * spent — so a warm call awaits nothing. Concurrency and streams are counted in this process.
 */
import { ADMIN_OWNER, type CallerLimitSettings, type KeyRateLimit, type RateBudget } from "@mcpgw/aws";
import { AppError, errorFields, type Logger } from "@mcpgw/core";
import { recordRateLimited } from "@mcpgw/telemetry";
import { createMiddleware } from "hono/factory";
import type { AppEnv, Principal } from "../env";
import { auditRefused, callNote } from "./call-audit";
import type { GatewayDeps } from "./deps";
import type { SessionCap } from "./mcp-sessions";
import { restCallOrigin } from "./routes";
import { threadOwner } from "./thread-access";

/** The limits that answer 429 `rate_limited`, as a refusal's `limit` names them. */
export type LimitName = "rate" | "concurrency" | "sessions" | "streams";

/** What a caller asks for: a call (any request), or a standing stream. */
export type RequestKind = "call" | "stream";

/** How long a caller refused for a cap (calls, streams, sessions in use) is told to wait. */
const CAP_RETRY_AFTER_S = 1;
/** A caller's minute is leased in this many slices at most (fewer shared-budget writes, less left unspent). */
const SLICES_PER_MINUTE = 20;
/**
 * How many leases a call waits for before it is refused: calls that arrive together while the share is
 * empty wait on the same lease, and those it cannot serve on the next.
 */
const MAX_LEASE_WAITS = 8;
/** Callers with nothing in flight are forgotten after this long (their bucket is full again by then). */
const IDLE_FORGET_MS = 5 * 60_000;
/** The caller table is swept for idle callers every this many admissions. */
const SWEEP_EVERY = 1_024;
const MINUTE_MS = 60_000;

/** The rate limits that apply to one caller: a key's own fields over the global ones. */
export function effectiveLimits(
  global: CallerLimitSettings,
  own: KeyRateLimit | null | undefined,
): { perMinute: number; burst: number; concurrent: number } {
  const perMinute = own?.perMinute ?? global.perMinute;
  return {
    perMinute,
    burst: Math.min(own?.burst ?? global.burst, perMinute),
    concurrent: own?.concurrent ?? global.concurrent,
  };
}

/** A token bucket: `capacity` tokens, refilled at `perMinute`; pure arithmetic on the times given. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(capacity: number, now: number) {
    this.tokens = capacity;
    this.at = now;
  }

  /** Takes a token: 0 when taken, else the milliseconds until one will be there. */
  take(now: number, capacity: number, perMinute: number): number {
    this.tokens = Math.min(capacity, this.tokens + ((now - this.at) * perMinute) / MINUTE_MS);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * MINUTE_MS) / perMinute);
  }

  /** Gives back a token taken for a call that was then refused elsewhere. */
  giveBack(capacity: number): void {
    this.tokens = Math.min(capacity, this.tokens + 1);
  }
}

/**
 * This instance's share of a caller's shared minute budget: tokens leased and not yet spent. A slice
 * leased in one minute may be spent early in the next (at most one slice per instance over the limit
 * at a minute's turn); a slice an instance leaves unspent is lost to the others for that minute.
 */
export class SharedShare {
  private tokens = 0;
  private leasing: Promise<void> | undefined;
  /** When the shared minute's budget was found spent: nothing more to lease before then. */
  private spentUntil = 0;

  constructor(
    private readonly lease: (window: number, want: number, limit: number) => Promise<number>,
    private readonly onLeaseError: (error: unknown) => void,
  ) {}

  /** Spends one token already leased, if there is one (the warm path: no wait, no promise). */
  trySpend(now: number, perMinute: number): boolean {
    if (this.tokens <= 0) return false;
    this.tokens -= 1;
    // Leased again before the slice runs out: the next calls find tokens here, not a round trip.
    const slice = sliceOf(perMinute);
    if (this.tokens <= slice / 2) void this.refill(now, slice, perMinute);
    return true;
  }

  /** Spends one token: 0 when spent, else the milliseconds until the shared minute turns. */
  async spend(now: number, perMinute: number): Promise<number> {
    const slice = sliceOf(perMinute);
    for (let attempt = 0; attempt < MAX_LEASE_WAITS; attempt++) {
      if (this.trySpend(now, perMinute)) return 0;
      if (now < this.spentUntil) return this.spentUntil - now;
      await this.refill(now, slice, perMinute);
    }
    return Math.max(1, this.spentUntil - now);
  }

  private refill(now: number, slice: number, perMinute: number): Promise<void> {
    this.leasing ??= this.leaseSlice(now, slice, perMinute).finally(() => {
      this.leasing = undefined;
    });
    return this.leasing;
  }

  private async leaseSlice(now: number, slice: number, perMinute: number): Promise<void> {
    const window = Math.floor(now / MINUTE_MS);
    let got: number;
    try {
      got = await this.lease(window, slice, perMinute);
    } catch (error) {
      // The shared budget unreachable: this instance's own bucket still bounds the caller here.
      this.onLeaseError(error);
      got = slice;
    }
    this.tokens += got;
    if (got === 0) this.spentUntil = (window + 1) * MINUTE_MS;
  }
}

/** How many tokens one lease asks for: a twentieth of the minute, at least one. */
export function sliceOf(perMinute: number): number {
  return Math.max(1, Math.ceil(perMinute / SLICES_PER_MINUTE));
}

/** What this process knows of one caller. */
interface CallerState {
  bucket: TokenBucket;
  share: SharedShare | undefined;
  inFlight: number;
  streams: number;
  lastUsed: number;
}

/** The limits of every caller of this process (and the cap on each one's 2025 sessions). */
export class CallerLimits implements SessionCap {
  private readonly callers = new Map<string, CallerState>();
  private admissions = 0;

  /**
   * `budget` shares each caller's rate with the other instances (none: this process alone counts);
   * `now` is the clock (tests give their own).
   */
  constructor(
    private readonly settings: CallerLimitSettings,
    private readonly budget: RateBudget | undefined,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Admits one request of `principal`: a call, or a standing stream. Resolves to the function that
   * ends it (call it once the call's answer is out or the stream closed; calling it twice is harmless);
   * refuses with 429 `rate_limited`, saying which limit and when to retry (`retryAfter`, seconds).
   */
  async admit(principal: Principal, kind: RequestKind): Promise<() => void> {
    return this.admitNow(principal, kind);
  }

  /**
   * {@link CallerLimits.admit} for the warm path: answers at once (no promise) while this instance
   * holds leased tokens, and refuses by throwing.
   */
  admitNow(principal: Principal, kind: RequestKind): (() => void) | Promise<() => void> {
    if (principal.kind === "admin") return noop;
    const limits = effectiveLimits(this.settings, principal.kind === "key" ? principal.rateLimit : undefined);
    const caller = threadOwner(principal);
    const state = this.stateOf(caller, limits.burst);
    const now = this.now();
    state.lastUsed = now;
    if (kind === "stream" && state.streams >= this.settings.streams)
      throw refusal("streams", this.settings.streams, CAP_RETRY_AFTER_S * 1_000);
    if (kind === "call" && state.inFlight >= limits.concurrent)
      throw refusal("concurrency", limits.concurrent, CAP_RETRY_AFTER_S * 1_000);
    const wait = state.bucket.take(now, limits.burst, limits.perMinute);
    if (wait > 0) throw refusal("rate", limits.perMinute, wait);
    // Held before any wait for a lease: calls that arrive meanwhile count it.
    const release = this.hold(state, kind);
    const { share } = state;
    if (!share || share.trySpend(now, limits.perMinute)) return release;
    return share.spend(now, limits.perMinute).then((sharedWait) => {
      if (sharedWait === 0) return release;
      release();
      state.bucket.giveBack(limits.burst);
      throw refusal("rate", limits.perMinute, sharedWait);
    });
  }

  /** How many 2025-era sessions the caller a session is bound to (its thread-owner key) may hold open. */
  capOf(caller: string): number {
    return caller === ADMIN_OWNER ? Number.POSITIVE_INFINITY : this.settings.sessions;
  }

  /** The refusal of a session past its caller's cap. */
  refusal(cap: number): AppError {
    return refusal("sessions", cap, CAP_RETRY_AFTER_S * 1_000);
  }

  private hold(state: CallerState, kind: RequestKind): () => void {
    if (kind === "stream") state.streams++;
    else state.inFlight++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (kind === "stream") state.streams--;
      else state.inFlight--;
    };
  }

  private stateOf(caller: string, burst: number): CallerState {
    let state = this.callers.get(caller);
    if (!state) {
      if (++this.admissions % SWEEP_EVERY === 0) this.forgetIdle();
      const { budget } = this;
      state = {
        bucket: new TokenBucket(burst, this.now()),
        share: budget
          ? new SharedShare(
              (window, want, limit) => budget.lease(caller, window, want, limit),
              (error) => this.logger.warn("rate budget unreachable", errorFields(error)),
            )
          : undefined,
        inFlight: 0,
        streams: 0,
        lastUsed: this.now(),
      };
      this.callers.set(caller, state);
    }
    return state;
  }

  /** Forgets callers idle for a while with nothing open: their next call starts afresh (a full bucket). */
  private forgetIdle(): void {
    const cutoff = this.now() - IDLE_FORGET_MS;
    for (const [caller, state] of this.callers)
      if (state.lastUsed < cutoff && state.inFlight === 0 && state.streams === 0) this.callers.delete(caller);
  }
}

function noop(): void {}

/** The 429 for `limit`, telling when to try again (whole seconds, at least 1); counted as a refusal. */
export function refusal(limit: LimitName, value: number, waitMs: number): AppError {
  recordRateLimited(limit);
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1_000));
  const what: Record<LimitName, string> = {
    rate: `its limit of ${value} calls per minute`,
    concurrency: `its limit of ${value} calls in flight at once`,
    sessions: `its limit of ${value} open MCP sessions`,
    streams: `its limit of ${value} standing streams open at once`,
  };
  return new AppError("rate_limited", `This caller is over ${what[limit]}; retry after ${retryAfter} s.`, {
    limit,
    retryAfter,
  });
}

/** The REST tool-call route (`/v1/tools/{name}/call`), its name captured. */
const TOOL_CALL_PATH = /^\/v1\/tools\/([^/]+)\/call$/;

/**
 * The tool a REST request's path calls, percent-decoded (as it stands when an escape is malformed, as
 * the router keeps it); undefined for any other request.
 */
export function calledToolOf(method: string, path: string): string | undefined {
  const encoded = method === "POST" ? TOOL_CALL_PATH.exec(path)?.[1] : undefined;
  if (encoded === undefined) return undefined;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/**
 * The data plane's REST routes admitted by `limits`: each request is a call, in flight until its
 * handler has answered (a result is whole by then); over a limit it is 429 `rate_limited` with
 * `Retry-After` (a tool call's refusal audited through `deps.audit`).
 */
export function limitRequests(
  limits: CallerLimits,
  deps: Partial<Pick<GatewayDeps, "audit" | "directory">> = {},
) {
  return createMiddleware<AppEnv>(async function limitRequests(c, next) {
    let release: () => void;
    try {
      const admitted = limits.admitNow(c.get("principal"), "call");
      release = admitted instanceof Promise ? await admitted : admitted;
    } catch (error) {
      // A refused tool call is audited as one (its body unread: no argument names).
      const tool = calledToolOf(c.req.method, c.req.path);
      if (tool && error instanceof AppError) {
        auditRefused(
          deps,
          callNote(restCallOrigin(c), tool, deps.directory),
          c.get("principal"),
          undefined,
          error.code,
        );
      }
      throw error;
    }
    try {
      await next();
    } finally {
      release();
    }
  });
}
