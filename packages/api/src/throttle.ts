/**
 * Per-source throttling in this process: events (failed admin-token guesses, registrations,
 * authorization requests) are counted per source in fixed windows, and a source over its limit waits
 * for its window to end. The table of sources is bounded (least recently seen forgotten first), so a
 * flood of sources costs bounded memory; it is per process on purpose — see docs/api.md.
 */
import { AppError } from "@mcpgw/core";
import { sourceKeyOf } from "@mcpgw/upstream";
import type { Context } from "hono";
import { getConnInfo as lambdaConnInfo } from "hono/aws-lambda";

/** How many sources a throttle remembers at most. */
export const MAX_SOURCES = 10_000;

/** A throttle's rule: at most `limit` events per `windowMs` from one source. */
export interface ThrottleRule {
  limit: number;
  windowMs: number;
}

/** Counts events per source; a source past its limit is told how long to wait. */
export class SourceThrottle {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();

  constructor(
    private readonly rule: ThrottleRule,
    private readonly maxSources = MAX_SOURCES,
  ) {}

  /** Whole seconds until `source` may act again, when it is over its limit; undefined when it may now. */
  waitOf(source: string, now = Date.now()): number | undefined {
    const window = this.windows.get(source);
    if (!window || window.endsAt <= now || window.count < this.rule.limit) return undefined;
    return Math.max(1, Math.ceil((window.endsAt - now) / 1000));
  }

  /** Counts one event of `source`. */
  count(source: string, now = Date.now()): void {
    let window = this.windows.get(source);
    if (!window || window.endsAt <= now) window = { count: 0, endsAt: now + this.rule.windowMs };
    window.count++;
    // Re-inserted: the map's order is least recently seen first, which is what goes when it is full.
    this.windows.delete(source);
    this.windows.set(source, window);
    if (this.windows.size > this.maxSources) this.windows.delete(this.windows.keys().next().value ?? "");
  }

  /** Counts one event of `source` unless it is over its limit; answers the wait when it is. */
  take(source: string, now = Date.now()): number | undefined {
    const wait = this.waitOf(source, now);
    if (wait === undefined) this.count(source, now);
    return wait;
  }

  /** How many sources are remembered (for tests of the bound). */
  get size(): number {
    return this.windows.size;
  }
}

/** The 429 `rate_limited` problem for a wait of `seconds` (its Retry-After). */
export function rateLimited(what: string, seconds: number): AppError {
  return new AppError("rate_limited", `${what} Try again in ${seconds} s.`, { retryAfter: seconds });
}

/**
 * Who sent the request, as a throttle key: the client address the Lambda function URL saw, or the
 * socket's peer on a Node listener; an IPv6 address counts by its /64 (one host may hold a whole
 * /64). Requests with neither (in-process, `app.request`) share one key.
 */
export function sourceOf(c: Context): string {
  const address = clientAddress(c);
  return address ? sourceKeyOf(address) : "local";
}

/** The client's address (the Lambda function URL's source IP, or the socket's peer); undefined in-process. */
export function clientAddress(c: Context): string | undefined {
  return lambdaAddress(c) ?? nodeAddress(c);
}

function lambdaAddress(c: Context): string | undefined {
  const env = c.env as { requestContext?: unknown } | undefined;
  return env?.requestContext ? lambdaConnInfo(c).remote.address : undefined;
}

function nodeAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}
