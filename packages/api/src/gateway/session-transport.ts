/**
 * A 2025 session's transport: the SDK's streamable-HTTP server transport, with a fast path for the
 * hot case — one well-formed JSON-RPC request (a tool call, a list, a read) on a session this process
 * holds. The SDK's own path re-validates every message with its schemas, builds a web stream per POST
 * and, on the gateway, has that stream read back whole ({@link settleEventStream}); the fast path
 * checks the envelope once, hands the request to the session's server as the SDK's transport would
 * (the server's handlers, validation, cancellation and questions are the SDK's, unchanged), and writes
 * the answer's events itself — the same events, in the same framing, with ids from the same store,
 * under the same headers. Anything else (initialize, a batch, a notification or answer, a bad header,
 * a malformed message) takes the SDK's path, which answers it as it always has.
 *
 * A request whose stream the client lost (it went away, or reconnects with `Last-Event-ID`), or that its
 * server closed for polling, is handed to the SDK's own routing under the same stream id: its later
 * events are kept and sent as the SDK sends any resumed stream's. That routing is the SDK transport's
 * private request-to-stream map; without it (another SDK build) every request takes the SDK's path.
 */
import { randomUUID } from "node:crypto";
import {
  type AuthInfo,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  type EventStore,
  type HandleRequestOptions,
  isJsonContentType,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  RELATED_TASK_META_KEY,
  type RequestId,
  type ScopeChallengeHandler,
  SUPPORTED_PROTOCOL_VERSIONS,
  type TransportSendOptions,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { SETTLE_MS, settledAnswer } from "./settle-stream";

/** How often an open event stream carries a comment, so idle proxies keep it (the SDK's default). */
export const KEEP_ALIVE_MS = 15_000;

/**
 * A session's event store that also keeps an event given as its JSON text: the fast path writes that
 * text on the stream too, so an answer is serialised once.
 */
export interface SessionEventStore extends EventStore {
  storeJson(streamId: string, json: string): Promise<string>;
}

export interface SessionTransportOptions {
  sessionId: string;
  /** Where the session's events are kept for a client that reconnects with `Last-Event-ID`. */
  eventStore: SessionEventStore;
  /** What the session's streams tell clients to wait before reconnecting. */
  retryInterval: number;
  /** The client ended the session (DELETE). */
  onsessionclosed: () => void;
  /** False: every request takes the SDK's path (for tests comparing the two). */
  fastPath?: boolean;
}

/** The SDK's session transport, serving one plain request on its own ({@link serveRequest}). */
export class SessionTransport extends WebStandardStreamableHTTPServerTransport {
  /** Requests served by the fast path and not yet answered, by id: their exchanges. */
  readonly #exchanges = new Map<RequestId, Exchange>();
  readonly #store: SessionEventStore;
  readonly #retryInterval: number;
  /** The SDK transport's own request-to-stream routes, where a request is handed over. */
  readonly #routes: Map<RequestId, string> | undefined;
  #fastPath: boolean;
  #versions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  #closed = false;

  constructor(options: SessionTransportOptions) {
    super({
      sessionIdGenerator: () => options.sessionId,
      eventStore: options.eventStore,
      retryInterval: options.retryInterval,
      keepAliveMs: KEEP_ALIVE_MS,
      onsessionclosed: options.onsessionclosed,
    });
    this.#store = options.eventStore;
    this.#retryInterval = options.retryInterval;
    this.#routes = streamRoutesOf(this);
    this.#fastPath = (options.fastPath ?? true) && this.#routes !== undefined;
  }

  /**
   * A scope challenge is the SDK's to make: with one set, every request takes its path. (An SDK
   * `McpServer` sets one as it connects; the gateway's sessions are served by a plain `Server`.)
   */
  override setScopeChallengeResolver(resolver: ScopeChallengeHandler): void {
    super.setScopeChallengeResolver(resolver);
    this.#fastPath = false;
  }

  /**
   * A reconnect to a fast-path request's stream (one the SDK's checks will let through): the request
   * is the SDK's from here on. Its first stream, if the gateway still thinks it open, is ended — the
   * client says it lost it (the SDK's own path would refuse the reconnect until it noticed).
   */
  override async handleRequest(request: Request, options?: HandleRequestOptions): Promise<Response> {
    const lastEventId = request.method === "GET" ? request.headers.get("last-event-id") : null;
    if (lastEventId && this.#exchanges.size > 0 && this.#acceptsReconnect(request)) {
      const streamId = await this.#store.getStreamIdForEventId?.(lastEventId)?.catch(() => undefined);
      for (const [id, exchange] of [...this.#exchanges])
        if (exchange.streamId === streamId) this.#handOver(id, exchange);
    }
    return super.handleRequest(request, options);
  }

  /** Whether a GET passes what the SDK checks before it replays a stream: Accept, session, version. */
  #acceptsReconnect(request: Request): boolean {
    return Boolean(request.headers.get("accept")?.includes("text/event-stream")) && this.#isOwn(request);
  }

  /** Whether a request names this session and no version it does not speak (none: the negotiated one). */
  #isOwn(request: Request): boolean {
    const version = request.headers.get("mcp-protocol-version");
    return (
      request.headers.get("mcp-session-id") === this.sessionId &&
      (version === null || this.#versions.includes(version))
    );
  }

  override setSupportedProtocolVersions(versions: string[]): void {
    super.setSupportedProtocolVersions(versions);
    this.#versions = [...versions];
  }

  /**
   * `request` (its body parsed: `message`) answered by the fast path when it is a POST of one plain
   * request on this initialized session; undefined when it is anything else (the SDK's path serves it).
   */
  async serveRequest(request: Request, message: unknown, authInfo: AuthInfo): Promise<Response | undefined> {
    if (!this.#fastPath || this.#closed || this.sessionId === undefined || request.method !== "POST")
      return undefined;
    if (!isPlainRequest(message) || message.method === "initialize" || this.#exchanges.has(message.id))
      return undefined;
    if (
      !acceptsBoth(request.headers.get("accept")) ||
      !isJsonContentType(request.headers.get("content-type")) ||
      !this.#isOwn(request)
    )
      return undefined;

    // As the SDK's transport opens a resumable stream: an event with an id and no message, first.
    const negotiated = request.headers.get("mcp-protocol-version") ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    const resumable = this.#versions.includes(negotiated) && negotiated >= "2025-11-25";
    const exchange = new Exchange(randomUUID(), this.sessionId, {
      release: () => {
        if (this.#exchanges.get(message.id) === exchange) this.#exchanges.delete(message.id);
      },
      lost: () => this.#handOver(message.id, exchange),
    });
    this.#exchanges.set(message.id, exchange);
    try {
      if (resumable) {
        const primed = await this.#store.storeEvent(exchange.streamId, {} as JSONRPCMessage);
        exchange.prime(`id: ${primed}\nretry: ${this.#retryInterval}\ndata: \n\n`);
      }
    } catch {
      // Nothing of it was sent: the SDK's path answers it.
      exchange.end();
      return undefined;
    }
    // Closed meanwhile: the SDK's path says so.
    if (this.#closed) {
      exchange.end();
      return undefined;
    }
    try {
      this.onmessage?.(message, {
        authInfo,
        request,
        ...(resumable
          ? {
              closeSSEStream: () => this.#handOver(message.id, exchange),
              closeStandaloneSSEStream: () => this.closeStandaloneSSEStream(),
            }
          : {}),
      });
    } catch (error) {
      exchange.end();
      throw error;
    }
    return exchange.answer;
  }

  /** A message for a request the fast path serves goes to its exchange; any other, the SDK's way. */
  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answers = "result" in message || "error" in message;
    const id = answers ? message.id : options?.relatedRequestId;
    const exchange = id === undefined ? undefined : this.#exchanges.get(id);
    if (id === undefined || !exchange) return super.send(message, options);
    const data = JSON.stringify(message);
    const eventId = await this.#store.storeJson(exchange.streamId, data);
    if (this.#exchanges.get(id) !== exchange) {
      // Handed over while it was being kept (the session's store keeps events in memory: a microtask,
      // before any replay can read it): the reconnect's replay sends it. An answer ends the request
      // there too (a stream the SDK holds open for it is closed; the client reads it on resuming).
      if (answers && this.#routes?.get(id) === exchange.streamId) {
        this.closeSSEStream(id);
        this.#routes.delete(id);
      }
      return;
    }
    exchange.write(`event: message\nid: ${eventId}\ndata: ${data}\n\n`);
    if (answers) exchange.end();
  }

  /** `id`'s later events go the SDK's way, under the exchange's stream id (kept, and sent on a reconnect). */
  #handOver(id: RequestId, exchange: Exchange): void {
    if (this.#exchanges.get(id) !== exchange) return;
    this.#exchanges.delete(id);
    exchange.disconnect();
    if (!this.#closed) this.#routes?.set(id, exchange.streamId);
  }

  override async close(): Promise<void> {
    this.#closed = true;
    for (const exchange of [...this.#exchanges.values()]) exchange.end();
    this.#exchanges.clear();
    await super.close();
  }
}

/**
 * One fast-path request's answer. Until its first message is ready nothing is sent; a response that
 * is all there is (the answer over at once) goes as one body, as {@link settleEventStream} makes the
 * SDK's stream. A message before it (progress, a log line, a question) — or no message within
 * {@link SETTLE_MS} — turns it into a stream, which carries the rest as it comes. Once the stream is
 * over for the client (it left, or the server closed it for polling) the request is `lost` to it: the
 * transport hands it to the SDK's routing, and a reconnect with `Last-Event-ID` gets the rest there.
 */
class Exchange {
  /** The answer: the whole body, or a stream. */
  readonly answer: Promise<Response>;
  #resolve!: (response: Response) => void;
  /** Event text not yet sent (all of it, until the answer goes out). */
  #pending = "";
  #stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  #state: "waiting" | "deciding" | "streaming" | "over" = "waiting";
  readonly #timer: NodeJS.Timeout;
  #keepAlive: NodeJS.Timeout | undefined;
  readonly #headers: Record<string, string>;

  constructor(
    readonly streamId: string,
    sessionId: string,
    private readonly hooks: {
      /** The request is done with (answered, or its session closed). */
      release: () => void;
      /** The client's stream is gone, or closed for polling: the rest goes the SDK's way. */
      lost: () => void;
    },
  ) {
    this.#headers = {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      "mcp-session-id": sessionId,
    };
    this.answer = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    this.#timer = setTimeout(() => this.#openStream(), SETTLE_MS);
  }

  /** The stream's first event (before any message): what a client resumes from. */
  prime(text: string): void {
    this.#pending = text + this.#pending;
  }

  /** Sends (or keeps, until the answer goes out) one event's text. */
  write(text: string): void {
    switch (this.#state) {
      case "waiting":
        this.#pending += text;
        // Whatever else is ready now goes with it (as the SDK's stream, read back, would).
        this.#state = "deciding";
        setImmediate(() => this.#openStream());
        return;
      case "deciding":
        this.#pending += text;
        return;
      case "streaming":
        this.#enqueue(text);
        return;
      case "over":
        return;
    }
  }

  /** The request is answered, or its session closed: nothing more is written. */
  end(): void {
    this.hooks.release();
    this.disconnect();
  }

  /** Ends the HTTP answer where it is (its stream closed, or the body whole as it stands). */
  disconnect(): void {
    if (this.#state === "over") return;
    clearTimeout(this.#timer);
    clearInterval(this.#keepAlive);
    const state = this.#state;
    this.#state = "over";
    if (state === "waiting" || state === "deciding")
      this.#resolve(settledAnswer(this.#pending, { status: 200, headers: this.#headers }));
    try {
      this.#stream?.close();
    } catch {
      // Closed already: the client went away.
    }
    this.#stream = undefined;
  }

  #openStream(): void {
    if (this.#state !== "waiting" && this.#state !== "deciding") return;
    clearTimeout(this.#timer);
    this.#state = "streaming";
    const first = this.#pending;
    this.#pending = "";
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#stream = controller;
        if (first) controller.enqueue(Buffer.from(first));
      },
      cancel: () => {
        this.#stream = undefined;
        this.hooks.lost();
        this.disconnect();
      },
    });
    this.#keepAlive = setInterval(() => this.#enqueue(": keepalive\n\n"), KEEP_ALIVE_MS);
    this.#keepAlive.unref();
    this.#resolve(settledAnswer(body, { status: 200, headers: this.#headers }, false));
  }

  #enqueue(text: string): void {
    try {
      this.#stream?.enqueue(Buffer.from(text));
    } catch {
      this.#stream = undefined;
    }
  }
}

/** The SDK transport's map of request ids to their streams' ids, if this build of it has one. */
function streamRoutesOf(
  transport: WebStandardStreamableHTTPServerTransport,
): Map<RequestId, string> | undefined {
  const routes = (transport as unknown as { _requestToStreamMapping?: unknown })._requestToStreamMapping;
  return routes instanceof Map ? (routes as Map<RequestId, string>) : undefined;
}

/** The protocol versions of the 2025 era: a header naming one claims nothing newer. */
const LEGACY_VERSIONS: ReadonlySet<string> = new Set([
  "2024-11-05",
  "2025-03-26",
  "2025-06-18",
  "2025-11-25",
]);

/**
 * True when the SDK's dual-era classification (`isLegacyRequest`) is sure to call `request` 2025-era:
 * one plain request, not `initialize`, with no 2026 envelope claim in its `_meta` and no newer version
 * in its header — read here without the SDK's schemas. False means "ask the SDK", not "2026".
 */
export function plainLegacyRequest(request: Request, body: unknown): boolean {
  if (request.method !== "POST" || !isPlainRequest(body) || body.method === "initialize") return false;
  const meta = body.params?._meta;
  if (isRecord(meta) && PROTOCOL_VERSION_META_KEY in meta) return false;
  const version = request.headers.get("mcp-protocol-version");
  return version === null || LEGACY_VERSIONS.has(version);
}

/** A JSON-RPC request exactly as the SDK's schema takes one, and nothing it would reject or reshape. */
function isPlainRequest(
  message: unknown,
): message is { jsonrpc: "2.0"; id: RequestId; method: string; params?: Record<string, unknown> } {
  if (!isRecord(message) || message.jsonrpc !== "2.0" || typeof message.method !== "string") return false;
  const { id, params } = message;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return false;
  for (const key in message)
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params") return false;
  if (params === undefined) return true;
  if (!isRecord(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isRecord(meta) || RELATED_TASK_META_KEY in meta) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === "string" || Number.isSafeInteger(token);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether an Accept header takes both JSON and event streams (the SDK's test: both named in it). */
function acceptsBoth(accept: string | null): boolean {
  return Boolean(accept?.includes("application/json") && accept.includes("text/event-stream"));
}
