/**
 * Log lines an upstream sends outside any call, on `/mcp/{server}`. Only a session the server shares
 * with every caller is listened to (not a `per_user` server's, a stdio child's per caller, nor a
 * thread's instance: those lines are their caller's), so what it says outside a call is the server's,
 * and goes to every 2025 session listening on `/mcp/{server}` for that server — matched by id, and
 * only where the session's caller has the server in scope — at or above the level the client set.
 *
 * Bounded, so a flooding upstream costs other tenants nothing: per server a token bucket lets
 * {@link SESSION_LOG_BURST} lines through at once and {@link SESSION_LOG_RATE} a second after; a line
 * longer than {@link MAX_SESSION_LOG_BYTES} is dropped too, and drops are counted in one warning per server a second. Lines are scrubbed of the credentials the
 * session was opened with, as call errors are. Nothing here waits: the session's stream never stalls.
 */
import type { Logger } from "@mcpgw/core";
import { type SessionLogListener, scrubSecrets } from "@mcpgw/upstream";
import { inScope } from "./catalogue";
import type { UpstreamSessionLogs } from "./deps";
import type { DirectoryEntry } from "./directory";
import { TokenBucket } from "./limits";
import { atLeast } from "./mcp-request";
import type { LegacySession } from "./mcp-sessions";

/** Session log lines relayed per server, per second on average. */
export const SESSION_LOG_RATE = 50;
/** Session log lines relayed per server at once. */
export const SESSION_LOG_BURST = 50;
/** The longest session log line relayed (its params as JSON, in bytes). */
export const MAX_SESSION_LOG_BYTES = 32 * 1024;
/** Drops are reported at most this often per server. */
const DROP_REPORT_MS = 1_000;

/** Where the listening sessions are. */
export interface LogListeners {
  of(endpoint: undefined): Iterable<LegacySession>;
}

/** Lines of one server dropped since its last report. */
interface Drops {
  name: string;
  overRate: number;
  tooLarge: number;
}

/** Relays what shared upstream sessions log outside calls to their `/mcp/{server}` listeners. */
export class SessionLogRelay implements UpstreamSessionLogs {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly drops = new Map<string, Drops>();
  private listeners: LogListeners | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly maxBytes = MAX_SESSION_LOG_BYTES,
  ) {}

  /** Starts telling the sessions of `listeners`. */
  start(listeners: LogListeners): void {
    this.listeners = listeners;
  }

  listen(entry: DirectoryEntry, secrets: string[]): SessionLogListener {
    const { id, name } = entry.server;
    return (params) => this.relay(id, name, params, secrets);
  }

  private relay(id: string, name: string, params: Record<string, unknown>, secrets: string[]): void {
    if (!this.admits(id)) {
      this.drop(id, name, "overRate");
      return;
    }
    const text = JSON.stringify(params);
    if (Buffer.byteLength(text) > this.maxBytes) {
      this.drop(id, name, "tooLarge");
      return;
    }
    const line = scrubbed(text, params, secrets);
    for (const session of this.listeners?.of(undefined) ?? []) {
      const { audience, logLevel } = session;
      if (audience?.serverId !== id || !inScope(audience.scope, id)) continue;
      if (logLevel !== undefined && !atLeast(line.level, logLevel)) continue;
      void session.server
        .notification({ method: "notifications/message", params: line })
        .catch(() => undefined);
    }
  }

  /** Takes a token of the server's bucket: false when there is none. */
  private admits(id: string): boolean {
    const now = Date.now();
    let bucket = this.buckets.get(id);
    if (!bucket) {
      bucket = new TokenBucket(SESSION_LOG_BURST, now);
      this.buckets.set(id, bucket);
    }
    return bucket.take(now, SESSION_LOG_BURST, SESSION_LOG_RATE * 60) === 0;
  }

  /** Counts a dropped line; the first since the last report schedules the next. */
  private drop(id: string, name: string, reason: "overRate" | "tooLarge"): void {
    let drops = this.drops.get(id);
    if (!drops) {
      drops = { name, overRate: 0, tooLarge: 0 };
      this.drops.set(id, drops);
      setTimeout(() => this.report(id), DROP_REPORT_MS).unref();
    }
    drops[reason]++;
  }

  private report(id: string): void {
    const drops = this.drops.get(id);
    this.drops.delete(id);
    if (!drops) return;
    this.logger.warn("upstream session log lines dropped", {
      server: drops.name,
      overRate: drops.overRate,
      tooLarge: drops.tooLarge,
      ratePerSecond: SESSION_LOG_RATE,
      maxBytes: this.maxBytes,
    });
  }
}

/** A log line's params with `secrets` scrubbed from them (as JSON); the params as they were when none occur. */
function scrubbed(text: string, params: Record<string, unknown>, secrets: string[]): Record<string, unknown> {
  const clean = scrubSecrets(text, secrets);
  if (clean === text) return params;
  try {
    return JSON.parse(clean) as Record<string, unknown>;
  } catch {
    return { level: params.level, data: "[log line withheld: it held a credential]" };
  }
}
