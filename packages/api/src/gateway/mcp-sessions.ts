/**
 * 2025-era MCP sessions. A 2025 client initializes once and then names its session on every request;
 * the session is where what that era needs between requests lives — the client's capabilities (so
 * an upstream's mid-call question can be put to it), its log level, its resource subscriptions, its
 * GET stream for change notifications. The SDK's sessionful transport keeps all that in process.
 *
 * The session id is portable: a signed token of the principal, the endpoint and the client's
 * initialize parameters. A process that does not hold the session (another Lambda environment, a
 * restarted gateway) rebuilds it from the token — replaying the initialize into a fresh SDK server —
 * so ordinary requests work wherever they land; only in-flight state (a pending question, the log
 * level, subscriptions, an open GET stream) stays with the process that had it.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AppError } from "@mcpgw/core";
import type { AuthInfo, JSONRPCMessage, Server } from "@modelcontextprotocol/server";
import type { ServerScope } from "./catalogue";
import { type SessionEventStore, SessionTransport } from "./session-transport";
import {
  opensStandaloneStream,
  type StandaloneStream,
  streamOfEventId,
  trackStandalone,
} from "./standalone-stream";

/** What a 2025 session is bound to and what its client declared at initialize. */
interface SessionClaims {
  /** Principal key: who may use the session. */
  p: string;
  /** The endpoint: '' for `/mcp`, else the server name of `/mcp/{server}`. */
  e: string;
  /** The initialize params (protocol version, capabilities, client info), bounded. */
  i: Record<string, unknown>;
  /** Random, so every session id is unique. */
  r: string;
}

/** A live session in this process. */
export interface LegacySession {
  id: string;
  principal: string;
  endpoint: string;
  server: Server;
  transport: SessionTransport;
  lastUsed: number;
  /** The log level the client set (logging/setLevel); undefined: everything. */
  logLevel?: string;
  /** Resource URIs the client subscribed to, as it named them. */
  subscriptions: Set<string>;
  /** Whose lines a listening client may hear, as its latest request found it. */
  audience?: SessionAudience;
  /** Its standalone GET stream, while one is open in this process. */
  standalone?: StandaloneStream;
}

/**
 * The server a session's latest request named (`/mcp/{server}`, by id; none on `/mcp`) and its
 * caller's scope then: what the server's own log lines are matched against.
 */
export interface SessionAudience {
  serverId: string | undefined;
  scope: ServerScope;
}

/** What a session's SSE streams tell clients to wait before reconnecting. */
const RETRY_INTERVAL_MS = 2_000;
/** Events a session keeps for replay after a reconnect: the most recent ones, within both bounds. */
const REPLAY_EVENTS = 256;
const REPLAY_BYTES = 1024 * 1024;

/** Initialize params larger than this are kept without the client's capabilities' detail. */
const MAX_CLAIMS_BYTES = 4_096;
/** Sessions idle this long are closed. */
export const SESSION_IDLE_MS = 30 * 60_000;
/** At most this many sessions per process; past it the least recently used is closed. */
export const MAX_SESSIONS = 10_000;

/**
 * How many sessions each principal may hold open in this process, and the refusal past it: a new
 * session (or one rebuilt here) over its principal's cap is refused — never another's session closed.
 */
export interface SessionCap {
  capOf(principal: string): number;
  refusal(cap: number): AppError;
}

/** The 2025 sessions of this process, and how to rebuild one from its id. */
export class LegacySessions {
  private readonly sessions = new Map<string, LegacySession>();
  /** Live sessions per principal. */
  private readonly held = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly key: Buffer,
    private readonly newServer: (endpoint: string) => Server | Promise<Server>,
    private readonly idleMs = SESSION_IDLE_MS,
    private readonly cap?: SessionCap,
    /** False: every request takes the SDK transport's own path (tests compare the two). */
    private readonly fastPath = true,
  ) {
    this.timer = setInterval(() => this.closeIdle(), Math.min(idleMs, 60_000));
    this.timer.unref();
  }

  /**
   * Serves one 2025 request of `principal` on `endpoint` that opens a session (an initialize) or
   * names one: served by that session, rebuilt here when this process does not hold it. A session
   * id that is not genuine, or not this caller's on this endpoint, is 404 (the client initializes
   * again). One past the principal's session cap is refused (throws its `rate_limited` AppError).
   * `audience` is kept on the session, as of this request; a GET's standalone stream is tracked on it.
   */
  async handle(
    request: Request,
    parsedBody: unknown,
    principal: string,
    endpoint: string,
    authInfo: AuthInfo,
    audience?: SessionAudience,
  ): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    const session = id
      ? await this.resume(id, principal, endpoint)
      : await this.open(
          principal,
          endpoint,
          (parsedBody as { params?: Record<string, unknown> }).params ?? {},
        );
    if (!session) return sessionNotFound();
    session.lastUsed = Date.now();
    if (audience) session.audience = audience;
    const response =
      (await session.transport.serveRequest(request, parsedBody, authInfo)) ??
      (await session.transport.handleRequest(request, { parsedBody, authInfo }));
    if (!opensStandaloneStream(request)) return response;
    return trackStandalone(
      response,
      (stream) => {
        session.standalone = stream;
      },
      (stream) => {
        if (session.standalone === stream) session.standalone = undefined;
      },
    );
  }

  /** The live sessions of an endpoint in this process. */
  *of(endpoint: string | undefined): Iterable<LegacySession> {
    for (const session of this.sessions.values())
      if (endpoint === undefined || session.endpoint === endpoint) yield session;
  }

  /** The session behind an SDK server instance (what a handler knows), if it is one of ours. */
  byServer(server: Server): LegacySession | undefined {
    return this.servers.get(server);
  }

  /** Live sessions in this process. */
  get size(): number {
    return this.sessions.size;
  }

  /** Closes every session. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.sessions.values()].map((session) => this.end(session)));
  }

  private readonly servers = new WeakMap<Server, LegacySession>();
  /** Sessions their clients ended, in this process (a token elsewhere stays usable until it idles out). */
  private readonly ended = new Set<string>();

  private async open(principal: string, endpoint: string, params: Record<string, unknown>) {
    const claims: SessionClaims = {
      p: principal,
      e: endpoint,
      i: boundedParams(params),
      r: randomBytes(12).toString("base64url"),
    };
    return this.start(this.sign(claims), claims);
  }

  private async resume(id: string, principal: string, endpoint: string): Promise<LegacySession | undefined> {
    if (this.ended.has(id)) return undefined;
    const live = this.sessions.get(id);
    if (live) return live.principal === principal && live.endpoint === endpoint ? live : undefined;
    const claims = this.verify(id);
    if (!claims || claims.p !== principal || claims.e !== endpoint) return undefined;
    const session = await this.start(id, claims);
    await replayInitialize(session, claims.i);
    return session;
  }

  private async start(id: string, claims: SessionClaims): Promise<LegacySession> {
    this.hold(claims.p);
    try {
      return await this.made(id, claims);
    } catch (error) {
      if (this.sessions.get(id)?.principal !== claims.p) this.letGo(claims.p);
      throw error;
    }
  }

  /** Counts one more session of `principal`, or refuses it past the principal's cap. */
  private hold(principal: string): void {
    const held = this.held.get(principal) ?? 0;
    const cap = this.cap?.capOf(principal) ?? Number.POSITIVE_INFINITY;
    if (this.cap && held >= cap) throw this.cap.refusal(cap);
    this.held.set(principal, held + 1);
  }

  private letGo(principal: string): void {
    const held = (this.held.get(principal) ?? 1) - 1;
    if (held > 0) this.held.set(principal, held);
    else this.held.delete(principal);
  }

  private async made(id: string, claims: SessionClaims): Promise<LegacySession> {
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (oldest) await this.end(oldest);
    }
    const transport = new SessionTransport({
      sessionId: id,
      // Resumable streams: a client whose SSE stream dropped reconnects with Last-Event-ID (here).
      eventStore: boundedEventStore(),
      retryInterval: RETRY_INTERVAL_MS,
      fastPath: this.fastPath,
      // The client ended it (DELETE): it is not rebuilt here again.
      onsessionclosed: () => {
        this.ended.add(id);
        if (this.ended.size > MAX_SESSIONS) this.ended.delete(this.ended.values().next().value as string);
        const session = this.sessions.get(id);
        if (session) void this.end(session);
      },
    });
    const server = await this.newServer(claims.e);
    const session: LegacySession = {
      id,
      principal: claims.p,
      endpoint: claims.e,
      server,
      transport,
      lastUsed: Date.now(),
      subscriptions: new Set(),
    };
    this.sessions.set(id, session);
    this.servers.set(server, session);
    await server.connect(transport);
    return session;
  }

  private async end(session: LegacySession): Promise<void> {
    if (this.sessions.get(session.id) === session) {
      this.sessions.delete(session.id);
      this.letGo(session.principal);
    }
    await session.server.close().catch(() => undefined);
  }

  private closeIdle(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const session of this.sessions.values()) if (session.lastUsed < cutoff) void this.end(session);
  }

  private sign(claims: SessionClaims): string {
    const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
    return `${body}.${this.mac(body)}`;
  }

  private verify(id: string): SessionClaims | undefined {
    const [body, mac, extra] = id.split(".");
    if (!body || !mac || extra !== undefined || id.length > 8_192) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as SessionClaims;
      return typeof claims.p === "string" && typeof claims.e === "string" ? claims : undefined;
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac("sha256", this.key).update("mcpgw session\0").update(body).digest("base64url");
  }
}

/** The initialize params a session keeps: version, client info and capabilities, within a bound. */
function boundedParams(params: Record<string, unknown>): Record<string, unknown> {
  const kept = {
    protocolVersion: params.protocolVersion,
    capabilities: params.capabilities ?? {},
    clientInfo: params.clientInfo ?? { name: "unknown", version: "0" },
  };
  if (JSON.stringify(kept).length <= MAX_CLAIMS_BYTES) return kept;
  const capabilities = Object.fromEntries(
    Object.keys((params.capabilities as Record<string, unknown> | undefined) ?? {})
      .slice(0, 16)
      .map((name) => [name.slice(0, 64), {}]),
  );
  return {
    protocolVersion: String(params.protocolVersion).slice(0, 32),
    capabilities,
    clientInfo: { name: "unknown", version: "0" },
  };
}

/** Puts a rebuilt session's SDK server where the original was: initialized with the same params. */
async function replayInitialize(session: LegacySession, params: Record<string, unknown>): Promise<void> {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    session.transport
      .handleRequest(
        new Request("http://mcpgw.internal/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...headers,
          },
          body: JSON.stringify(body),
        }),
      )
      .then((response) => response.text());
  await post({ jsonrpc: "2.0", id: "mcpgw-restore", method: "initialize", params });
  await post(
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { "mcp-session-id": session.id, "mcp-protocol-version": String(params.protocolVersion ?? "") },
  );
}

/**
 * A session's recent SSE events, for a client that reconnects with `Last-Event-ID` (2025 resumability):
 * the latest {@link REPLAY_EVENTS} events within {@link REPLAY_BYTES}; older ones are gone, and a
 * reconnect after one of them resumes its stream with those kept (an event id names its stream).
 */
/** An event id the session's store gives: `<stream id>.<sequence, 12 digits>`. */
const EVENT_ID = /^[^\s]{1,256}\.\d{12}$/;

function boundedEventStore(): SessionEventStore {
  // Each event as its JSON text: one string per event stays alive, not the answer's object graph (a
  // busy session's last 256 answers would otherwise outlive the young generation and be copied on).
  const events: Array<{ id: string; streamId: string; json: string }> = [];
  let bytes = 0;
  let sequence = 0;
  const storeJson = async (streamId: string, json: string) => {
    const id = `${streamId}.${String(++sequence).padStart(12, "0")}`;
    events.push({ id, streamId, json });
    bytes += json.length;
    while (events.length > REPLAY_EVENTS || (bytes > REPLAY_BYTES && events.length > 1))
      bytes -= events.shift()?.json.length ?? 0;
    return id;
  };
  return {
    storeJson,
    storeEvent: (streamId, message) => storeJson(streamId, JSON.stringify(message)),
    async getStreamIdForEventId(eventId) {
      return EVENT_ID.test(eventId) ? streamOfEventId(eventId) : undefined;
    },
    async replayEventsAfter(lastEventId, { send }) {
      if (!EVENT_ID.test(lastEventId)) throw new Error("not an event id of this session");
      const streamId = streamOfEventId(lastEventId);
      for (const event of events) {
        // A stream's priming event (an id and no message) is not sent again.
        if (event.streamId === streamId && event.id > lastEventId && event.json !== "{}")
          await send(event.id, JSON.parse(event.json) as JSONRPCMessage);
      }
      return streamId;
    },
  };
}

function sessionNotFound(): Response {
  const body = {
    jsonrpc: "2.0",
    error: { code: -32001, message: "Session not found: initialize a new session." },
    id: null,
  };
  return new Response(JSON.stringify(body), { status: 404, headers: { "content-type": "application/json" } });
}
