/**
 * Cold upstreams heard: while some MCP client listens, the gateway keeps open the warm session of each
 * server that would announce its list changes to it — the pooled session calls use (its 2025 GET
 * stream or 2026 listen stream carries the server's `list_changed` to the change watcher), opened
 * when cold and touched so it does not idle out. A 2025 server that offers `logging` and whose admin
 * set `relaySessionLogs` is kept open too: its GET stream carries what it logs outside calls to its
 * `/mcp/{server}` listeners. Nothing is
 * polled: a server that announces no changes and logs nothing gets no session.
 */
import { errorFields, isModernRevision, isPerUser } from "@mcpgw/core";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";
import { touchServerSession, withServerSession } from "./server-session";
import { isThreadScoped } from "./thread-access";

/** The most upstream sessions kept open for listening at once (servers beyond it, by name, are not heard). */
export const MAX_LISTENED_SERVERS = 64;
/** Listening sessions being opened at once: a directory of new servers opens a few at a time. */
export const OPENS_AT_ONCE = 4;
/** A server whose listening session could not be opened is not tried again for this long. */
export const RETRY_AFTER_FAILURE_MS = 15_000;

/** Whether a server's last probe says it announces changes to its tools, prompts or resources. */
export function announcesListChanges(entry: DirectoryEntry): boolean {
  const capabilities = entry.profile?.capabilities as
    | Record<string, { listChanged?: unknown } | undefined>
    | undefined;
  if (!capabilities) return false;
  return ["tools", "prompts", "resources"].some((kind) => capabilities[kind]?.listChanged === true);
}

/**
 * Whether what a server logs outside calls is relayed: its admin set `relaySessionLogs` (the gateway
 * cannot tell a line about the server from one a tool logged about its caller), and its last probe
 * says it may log where the gateway hears it: a 2025 server offering `logging` (a 2026 server logs
 * only within a request).
 */
export function logsOutsideCalls(entry: DirectoryEntry): boolean {
  const { profile, server } = entry;
  if (server.transport !== "http" || server.relaySessionLogs !== true) return false;
  if (!profile || isModernRevision(profile.protocolVersion)) return false;
  const logging = (profile.capabilities as Record<string, unknown> | undefined)?.logging;
  return logging !== undefined && logging !== null;
}

/**
 * The servers whose changes (and logs outside calls) the gateway listens for, at most `max`, by name: connected, enabled, HTTP
 * (a stdio child's changes reach the runner, which probes on them), shared — never a `per_user`
 * server (each caller's session is their own: none is opened on nobody's behalf) nor a thread's —
 * and announcing list changes or logging outside calls.
 */
export function listenedServers(
  entries: Iterable<DirectoryEntry>,
  max = MAX_LISTENED_SERVERS,
): DirectoryEntry[] {
  const listened: DirectoryEntry[] = [];
  for (const entry of entries) {
    const { server } = entry;
    if (!server.enabled || entry.status?.state !== "connected" || server.transport !== "http") continue;
    if (isPerUser(server) || isThreadScoped(entry)) continue;
    if (!announcesListChanges(entry) && !logsOutsideCalls(entry)) continue;
    listened.push(entry);
  }
  return listened.sort((a, b) => a.server.name.localeCompare(b.server.name)).slice(0, max);
}

/**
 * Whether a server's shared 2025 session is kept from idling out: the server speaks both eras, is
 * shared (not `per_user`, not a thread's), and some 2025 client on `/mcp/{server}` holds state there —
 * a resource subscription or a log level (`holding`: those servers' names) — which the upstream keeps
 * only while that session lives.
 */
export function keepsLegacySession(entry: DirectoryEntry, holding: ReadonlySet<string>): boolean {
  const { server } = entry;
  if (!entry.profile?.legacy || !holding.has(server.name)) return false;
  return server.enabled && !isPerUser(server) && !isThreadScoped(entry);
}

/** Keeps the listened servers' sessions open while `keep` is called (every watcher tick). */
export class UpstreamListening {
  /** Servers whose session is being opened now. */
  private readonly opening = new Set<string>();
  /** Servers whose session could not be opened, with when. */
  private readonly failedAt = new Map<string, number>();

  constructor(private readonly deps: GatewayDeps) {}

  /**
   * Keeps the warm session of each of `entries` that {@link listenedServers} picks from idling out,
   * and opens the cold ones, at most {@link OPENS_AT_ONCE} at a time; a server whose open failed waits
   * {@link RETRY_AFTER_FAILURE_MS}. Servers no longer picked are let go: their sessions idle out, or the
   * pool drops them when the server is deleted, disabled or reconnected. A dual-era server's warm 2025
   * session is kept too while a 2025 client holds a subscription or log level there ({@link
   * keepsLegacySession}: `holding` names those servers); it is never opened here.
   */
  keep(entries: Iterable<DirectoryEntry>, holding: ReadonlySet<string> = new Set()): void {
    const all = [...entries];
    for (const entry of all)
      if (keepsLegacySession(entry, holding)) touchServerSession(this.deps, entry, "legacy");
    const listened = listenedServers(all);
    const ids = new Set(listened.map((entry) => entry.server.id));
    const now = Date.now();
    for (const [id, at] of this.failedAt)
      if (!ids.has(id) || at <= now - RETRY_AFTER_FAILURE_MS) this.failedAt.delete(id);
    for (const entry of listened) {
      const { id } = entry.server;
      if (this.opening.has(id) || this.failedAt.has(id) || touchServerSession(this.deps, entry)) continue;
      if (this.opening.size >= OPENS_AT_ONCE) continue;
      this.opening.add(id);
      void this.open(entry).finally(() => this.opening.delete(id));
    }
  }

  /** Opens the server's shared session (a call's: one config read, one connect), nothing run on it. */
  private async open(entry: DirectoryEntry): Promise<void> {
    try {
      // A failure here is not the server's status (the worker's probes say that): nobody called it.
      await withServerSession(this.deps, entry, async () => undefined, { authorize: false, quiet: true });
    } catch (error) {
      this.failedAt.set(entry.server.id, Date.now());
      this.deps.logger.warn("could not open a session to hear a server's changes", {
        server: entry.server.name,
        ...errorFields(error),
      });
    }
  }
}
