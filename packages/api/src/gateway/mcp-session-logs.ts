/**
 * Log lines an upstream sends outside any call, on `/mcp/{server}`. Only a session the server shares
 * with every caller is listened to (not a `per_user` server's, a stdio child's per caller, nor a
 * thread's instance: those lines are their caller's), so what it says outside a call is the server's,
 * and goes to every 2025 session listening on `/mcp/{server}` for that server — matched by id, and
 * only where the session's caller has the server in scope — at or above the level the client set.
 *
 * Only a server whose admin set `relaySessionLogs` is listened to at all: a tool that logs with no
 * related request (the SDK's `sendLoggingMessage` in a handler) puts a line about its caller on the same
 * stream, and the gateway cannot tell it from the server's own, so relaying is the admin's choice.
 *
 * A line goes only to a session whose standalone GET stream is open now (nothing is kept for one that
 * is not), opened within {@link STANDALONE_REAUTH_MS}: every {@link SWEEP_MS} the streams of relayed
 * servers' listeners older than that, less a sweep, are closed, so their clients reconnect and
 * authenticate again — a revoked key, or one whose scope no longer holds the server, hears nothing more.
 *
 * Bounded, so a flooding upstream or a client that never reads costs other tenants nothing: per server
 * a token bucket lets {@link SESSION_LOG_BURST} lines through at once and {@link SESSION_LOG_RATE} a
 * second after; a line longer than {@link MAX_SESSION_LOG_BYTES} is dropped too, and so is a line for a
 * session whose stream holds more than {@link MAX_UNREAD_BYTES} its client has not read; drops are
 * counted in one warning per server a second. Lines are scrubbed of the credentials the session was
 * opened with, as call errors are. Nothing here waits: the session's stream never stalls.
 */
import type { Logger } from "@mcpgw/core";
import { type SessionLogListener, scrubJson } from "@mcpgw/upstream";
import { inScope } from "./catalogue";
import type { UpstreamSessionLogs } from "./deps";
import type { DirectoryEntry } from "./directory";
import { TokenBucket } from "./limits";
import { atLeast } from "./mcp-request";
import type { LegacySession } from "./mcp-sessions";
import { MAX_UNREAD_BYTES } from "./standalone-stream";

/** Session log lines relayed per server, per second on average. */
export const SESSION_LOG_RATE = 50;
/** Session log lines relayed per server at once. */
export const SESSION_LOG_BURST = 50;
/** The longest session log line relayed (its params as JSON, in bytes). */
export const MAX_SESSION_LOG_BYTES = 32 * 1024;
/** Drops are reported at most this often per server. */
const DROP_REPORT_MS = 1_000;
/** How long after its GET authenticated a listener's standalone stream is relayed to. */
export const STANDALONE_REAUTH_MS = 30_000;
/** How often the streams of relayed servers' listeners are looked at, and closed when that old. */
export const SWEEP_MS = 5_000;
/** What a line's SSE framing adds to its params, at most (the JSON-RPC envelope, event id and type). */
const FRAME_BYTES = 256;

/** Where the listening sessions are. */
export interface LogListeners {
  of(endpoint: undefined): Iterable<LegacySession>;
}

/** Lines of one server dropped since its last report. */
interface Drops {
  name: string;
  overRate: number;
  tooLarge: number;
  /** Lines not sent to a session whose stream held too much unread. */
  unread: number;
}

/** Relays what shared upstream sessions log outside calls to their `/mcp/{server}` listeners. */
export class SessionLogRelay implements UpstreamSessionLogs {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly drops = new Map<string, Drops>();
  private listeners: LogListeners | undefined;
  /** Whether a server's admin has its lines relayed now (a setting turned off stops them at once). */
  private relays: (serverId: string) => boolean = () => false;
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly maxBytes = MAX_SESSION_LOG_BYTES,
  ) {}

  /**
   * Starts telling the sessions of `listeners` the lines of servers `relays` names (asked for each line:
   * a session opened while the setting was on relays nothing once it is off), and refreshing their streams.
   */
  start(listeners: LogListeners, relays: (serverId: string) => boolean): void {
    this.listeners = listeners;
    this.relays = relays;
    clearInterval(this.sweep);
    this.sweep = setInterval(() => this.refresh(), SWEEP_MS);
    this.sweep.unref();
  }

  /** Stops refreshing streams. */
  stop(): void {
    clearInterval(this.sweep);
  }

  listen(entry: DirectoryEntry, secrets: string[]): SessionLogListener {
    const { id, name } = entry.server;
    return (params) => this.relay(id, name, params, secrets);
  }

  /** Closes the streams of relayed servers' listeners that will be too old by the next sweep: they reconnect. */
  refresh(now = Date.now()): void {
    const cutoff = now - (STANDALONE_REAUTH_MS - SWEEP_MS);
    for (const session of this.listeners?.of(undefined) ?? []) {
      const serverId = session.audience?.serverId;
      if (!serverId || !this.relays(serverId)) continue;
      if (session.standalone && session.standalone.openedAt <= cutoff)
        session.transport.closeStandaloneSSEStream();
    }
  }

  private relay(id: string, name: string, params: Record<string, unknown>, secrets: string[]): void {
    if (!this.relays(id)) return;
    if (!this.admits(id)) {
      this.drop(id, name, "overRate");
      return;
    }
    const text = JSON.stringify(params);
    const textBytes = Buffer.byteLength(text);
    if (textBytes > this.maxBytes) {
      this.drop(id, name, "tooLarge");
      return;
    }
    const line = scrubJson(params, secrets, text) ?? {
      level: params.level,
      data: "[log line withheld: it held a credential]",
    };
    const bytes = textBytes + FRAME_BYTES;
    const now = Date.now();
    for (const session of this.listeners?.of(undefined) ?? []) {
      const { audience, logLevel, standalone } = session;
      if (audience?.serverId !== id || !inScope(audience.scope, id)) continue;
      // Only a stream open now, whose caller authenticated lately: nothing is stored for later.
      if (!standalone || now - standalone.openedAt >= STANDALONE_REAUTH_MS) continue;
      if (logLevel !== undefined && !atLeast(line.level, logLevel)) continue;
      if (standalone.unreadBytes + bytes > MAX_UNREAD_BYTES) {
        this.drop(id, name, "unread");
        continue;
      }
      const written = standalone.reserve(bytes);
      void session.server
        .notification({ method: "notifications/message", params: line })
        .catch(() => undefined)
        .finally(written);
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
  private drop(id: string, name: string, reason: "overRate" | "tooLarge" | "unread"): void {
    let drops = this.drops.get(id);
    if (!drops) {
      drops = { name, overRate: 0, tooLarge: 0, unread: 0 };
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
      unread: drops.unread,
      ratePerSecond: SESSION_LOG_RATE,
      maxBytes: this.maxBytes,
      maxUnreadBytes: MAX_UNREAD_BYTES,
    });
  }
}
