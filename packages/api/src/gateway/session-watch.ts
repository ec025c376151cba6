/**
 * Outages seen in seconds, not at the next sweep. A server the gateway holds a warm session with (a
 * server with clients) is watched through that session: when its transport reports the connection gone
 * (a 2025 session's standing stream drops, a connection is refused), or when it has been quiet for
 * {@link SESSION_CHECK_MS} and no longer answers a ping (the watch looks twice per that span, so a
 * lost server is asked about within 6 s, plus the ping), the worker is asked for a `check` at once. The
 * worker's check writes the status (`failed` for a server that cannot be reached), so the console shows
 * the outage within seconds. Sessions in use need no ping: their calls prove them (a call that loses
 * its transport marks the server failed itself). Each tick pings at most {@link MAX_CHECKS_PER_TICK}
 * sessions, the longest unchecked first, so a gateway holding a thousand warm sessions pings a bounded
 * few a second. Only a server's shared session speaks for it: a caller's, a thread's or a second era's
 * session is left to the calls made on it.
 */
import type { Logger } from "@mcpgw/core";
import type { SessionPool } from "@mcpgw/upstream";
import type { DirectoryEntry } from "./directory";
import type { ProbeRequests } from "./probe-requests";
import { alive } from "./server-session";

/** How long a warm session may stay quiet (unused, unchecked) before it is pinged; the watch looks every half of it. */
export const SESSION_CHECK_MS = 4_000;
/** The most sessions one tick pings. */
export const MAX_CHECKS_PER_TICK = 32;

/** Watches the pool's warm sessions for servers that went away. */
export class SessionWatch {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly pool: SessionPool,
    /** The server a shared session's pool key names (its id), if the directory knows it. */
    private readonly serverOf: (serverId: string) => DirectoryEntry | undefined,
    private readonly probes: ProbeRequests,
    private readonly logger: Logger,
    private readonly checkMs = SESSION_CHECK_MS,
  ) {}

  /**
   * Starts watching: disconnects as they are reported, quiet sessions every interval. A `checkMs` of 0
   * watches nothing (on Lambda: a frozen instance's timers run late and its streams are cut while it is
   * frozen, which would read as outages; calls and the sweep see them there).
   */
  start(): void {
    if (this.checkMs <= 0) return;
    this.pool.onDisconnect = (serverKey) => void this.suspect(serverKey, "its connection was lost");
    this.timer = setInterval(() => void this.tick(), this.checkMs / 2);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.pool.onDisconnect = undefined;
  }

  /** Pings the quiet shared sessions due (one round at a time); a session that does not answer is let go. */
  tick(): Promise<void> {
    this.checking ??= this.pingQuiet().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async pingQuiet(): Promise<void> {
    const due = this.pool.quiet(this.checkMs, MAX_CHECKS_PER_TICK, shared);
    await Promise.all(
      due.map(async ({ serverKey, pooled, stillQuiet }) => {
        if (await alive(pooled.session)) return;
        // A call that began meanwhile owns the session now: its own outcome says what happened.
        if (!stillQuiet()) return;
        pooled.claimFailure();
        await this.suspect(serverKey, "it did not answer a ping");
      }),
    );
  }

  /** Asks the worker to check a connected server the session suggests is gone. */
  private async suspect(serverKey: string, why: string): Promise<void> {
    if (!shared(serverKey)) return;
    const entry = this.serverOf(serverKey);
    if (entry?.status?.state !== "connected" || !entry.server.enabled) return;
    if (await this.probes.request(entry, "check", why))
      this.logger.info("server's warm session lost: a check is asked", { server: entry.server.name, why });
  }
}

/** A server's shared session: keyed by its id alone (a caller's, an era's, a thread's key has a `#`). */
function shared(serverKey: string): boolean {
  return !serverKey.includes("#");
}
