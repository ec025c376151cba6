/**
 * Who a message from an upstream belongs to. One upstream session serves many callers at once, but
 * what it sends mid-call — progress, a log line, or (2025 era) a request to ask the user or the model —
 * belongs to one call. Streamable HTTP sends those on the response stream of the POST that carried the
 * call; the session's fetch is tapped so every message on a call's stream is tied to that call before
 * the SDK reads it, and its notifications are told to the call there, in the order they came. The call is known at fetch time by a header its requests carry ({@link CALL_HEADER},
 * taken off again before the request leaves), so no async context is tracked per promise.
 */
import { createParser } from "eventsource-parser";
import { BufferedResponse, mediaTypeOf } from "./buffered-response";

/** The log levels of MCP, lowest first. */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/** A request an upstream sends its client mid-call: elicitation, sampling or roots. */
export interface UpstreamAsk {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params?: Record<string, unknown>;
}

/**
 * Whether a caller with these client capabilities may be asked `ask`: MCP lets a server ask a client
 * only for what the client declared (`roots`, `sampling`, `elicitation` — its `url` mode for a URL
 * elicitation, else form, which a bare `elicitation: {}` declares too).
 */
export function declaresCapabilityFor(
  capabilities: Record<string, unknown> | undefined,
  ask: UpstreamAsk,
): boolean {
  switch (ask.method) {
    case "roots/list":
      return capabilities?.roots !== undefined;
    case "sampling/createMessage":
      return capabilities?.sampling !== undefined;
    case "elicitation/create": {
      const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
      if (elicitation === undefined) return false;
      if (ask.params?.mode === "url") return elicitation.url !== undefined;
      return elicitation.form !== undefined || elicitation.url === undefined;
    }
  }
}

/** What a call lets its upstream reach: the caller's capabilities and its channels back. */
export interface CallContext {
  /** The caller's client capabilities: sent to 2026 upstreams, which ask only for what is declared. */
  clientCapabilities?: Record<string, unknown>;
  /** The caller's log level: 2026 upstreams log to the call only when one is given. */
  logLevel?: LogLevel;
  /**
   * A 2026 caller's own `Mcp-Param-*` headers (SEP-2243; empty when it sent none), sent on verbatim to
   * a 2026 upstream, which checks them against the arguments as the caller sent them. Absent (a 2025
   * or REST caller), the SDK mirrors the arguments into headers itself, from the tool's definition.
   */
  paramHeaders?: Record<string, string>;
  /** A progress notification for this call. */
  onProgress?(progress: { progress: number; total?: number; message?: string }): void;
  /** A log message the upstream sent on this call's stream. */
  onLog?(params: Record<string, unknown>): void;
  /**
   * A request a 2025 upstream sent on this call's stream: resolves with the caller's answer (the
   * bare result) or throws. Without it the gateway answers for the caller (declines, no roots).
   */
  ask?(request: UpstreamAsk, signal: AbortSignal): Promise<Record<string, unknown>>;
}

type JsonRpcId = string | number;

/** One progress notification's report, as a call's caller is told it. */
export type Progress = Parameters<NonNullable<CallContext["onProgress"]>>[0];

/** A call in flight, and how often its stream has told it of each progress value. */
interface Call {
  context: CallContext;
  told: Map<number, number>;
}

/**
 * The request header naming the call a request belongs to, between the SDK and the session's fetch:
 * the tap reads it and takes it off, so it never reaches the upstream.
 */
export const CALL_HEADER = "x-mcpgw-call";

/** The calls in flight on one session, and which of them each mid-call request belongs to. */
export class CallRouter {
  private readonly inFlight = new Map<CallContext, Call>();
  /** The calls in flight by the id their requests carry in {@link CALL_HEADER}. */
  private readonly calls = new Map<string, Call>();
  private lastCall = 0;
  /** Upstream request id → the call whose stream it came on (until it is answered). */
  private readonly asks = new Map<JsonRpcId, CallContext>();

  /**
   * Runs a call with `context` as the owner of whatever its requests' streams carry: `call` sends its
   * requests with `headers` (none without a context).
   */
  async run<T>(
    context: CallContext | undefined,
    call: (headers?: Record<string, string>) => Promise<T>,
  ): Promise<T> {
    if (!context) return call();
    const id = String(++this.lastCall);
    const record: Call = { context, told: new Map() };
    this.inFlight.set(context, record);
    this.calls.set(id, record);
    try {
      return await call({ [CALL_HEADER]: id });
    } finally {
      this.inFlight.delete(context);
      this.calls.delete(id);
      for (const [asked, owner] of this.asks) if (owner === context) this.asks.delete(asked);
    }
  }

  /**
   * Tells a call of the progress the SDK heard for it — unless the call's own stream told it already
   * (the tap hears it first, in order with the stream's other notifications): what reaches the SDK
   * elsewhere (a GET stream, a legacy SSE transport, an in-memory pair) is told here.
   */
  relayProgress(context: CallContext | undefined): (progress: Progress) => void {
    return (progress) => {
      const told = context && this.inFlight.get(context)?.told;
      const times = told?.get(progress.progress) ?? 0;
      if (times > 1) told?.set(progress.progress, times - 1);
      else if (times === 1) told?.delete(progress.progress);
      else context?.onProgress?.(progress);
    };
  }

  /**
   * The call an upstream request belongs to: the one whose stream carried it, or — for one sent
   * elsewhere (a GET stream, a legacy SSE transport) — the only call in flight, if there is one.
   */
  ownerOf(id: JsonRpcId): CallContext | undefined {
    const owner = this.asks.get(id);
    if (owner) {
      this.asks.delete(id);
      return owner;
    }
    return this.inFlight.size === 1 ? this.inFlight.keys().next().value : undefined;
  }

  /**
   * A fetch whose SSE response streams tie each message they carry to the call that made the request.
   * An event stream that arrived whole goes on as the JSON batch it amounts to ({@link finishedMessages}):
   * its messages parsed once, here, and no stream made to read them — a POST's only: the SDK reads a GET
   * (a stream resumed after `Last-Event-ID`, the session's own) only as an event stream.
   */
  tap(fetchImpl: typeof fetch): typeof fetch {
    return async (input, given) => {
      const { call, init } = this.claim(given);
      const response = await fetchImpl(input, init);
      const type = mediaTypeOf(response);
      if (type !== "text/event-stream") return response;
      const batchable = response instanceof BufferedResponse && init?.method !== "GET";
      const messages = batchable ? finishedMessages(response.bytes) : undefined;
      if (messages) {
        if (call) for (const message of messages) this.noteMessage(call, message);
        return asBatch(response as BufferedResponse, messages);
      }
      if (!call || !response.body) return response;
      return rebody(response, response.body.pipeThrough(this.observer(call)));
    };
  }

  /** The call a request belongs to, by its {@link CALL_HEADER}, and the request without that header. */
  private claim(init: RequestInit | undefined): { call?: Call; init: RequestInit | undefined } {
    if (!init?.headers) return { init };
    const headers = new Headers(init.headers);
    const id = headers.get(CALL_HEADER);
    if (id === null) return { init };
    headers.delete(CALL_HEADER);
    const call = this.calls.get(id);
    return { ...(call ? { call } : {}), init: { ...init, headers } };
  }

  /** Passes the stream through unchanged, noting each message before the SDK sees it. */
  private observer(call: Call): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    const parser = createParser({ onEvent: (event) => this.note(call, event.data) });
    return new TransformStream({
      transform(chunk, controller) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
    });
  }

  private note(call: Call, data: string): void {
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    this.noteMessage(call, message);
  }

  private noteMessage(call: Call, parsed: unknown): void {
    const message = parsed as { id?: unknown; method?: unknown; params?: unknown } | null;
    if (typeof message?.method !== "string") return;
    const { id, method, params } = message;
    if (typeof id === "string" || typeof id === "number") {
      this.asks.set(id, call.context);
      return;
    }
    // A notification: told to its call, in the order of the stream, while the call is in flight.
    if (!params || typeof params !== "object" || this.inFlight.get(call.context) !== call) return;
    if (method === "notifications/message") call.context.onLog?.(params as Record<string, unknown>);
    if (method !== "notifications/progress") return;
    const progress = progressOf(params as Record<string, unknown>);
    if (!progress) return;
    call.told.set(progress.progress, (call.told.get(progress.progress) ?? 0) + 1);
    call.context.onProgress?.(progress);
  }
}

/** A progress notification's report (its token aside), when it is one: a number, and what may go with it. */
export function progressOf(params: Record<string, unknown>): Progress | undefined {
  const { progress, total, message } = params;
  if (typeof progress !== "number" || !Number.isFinite(progress)) return undefined;
  if (total !== undefined && typeof total !== "number") return undefined;
  if (message !== undefined && typeof message !== "string") return undefined;
  return {
    progress,
    ...(total !== undefined ? { total } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}

/**
 * The JSON-RPC messages of an event stream that arrived whole, parsed — when it reads as a JSON batch
 * would: every event with data a `message` event of JSON, a response among them (the SDK's stream
 * reader would otherwise reconnect or report the stream's end), no `retry` hint. Else undefined, and
 * the stream is read as a stream.
 */
export function finishedMessages(bytes: Uint8Array): unknown[] | undefined {
  const messages: unknown[] = [];
  let readable = true;
  let answered = false;
  const parser = createParser({
    onEvent: (event) => {
      if (!readable || !event.data) return;
      if (event.event !== undefined && event.event !== "message") return;
      try {
        const message = JSON.parse(event.data) as Record<string, unknown> | null;
        messages.push(message);
        if (
          message &&
          typeof message === "object" &&
          "id" in message &&
          ("result" in message || "error" in message)
        )
          answered = true;
      } catch {
        readable = false;
      }
    },
    onRetry: () => {
      readable = false;
    },
  });
  parser.feed(textDecoder.decode(bytes));
  return readable && answered ? messages : undefined;
}

const textDecoder = new TextDecoder();

/** A finished event stream's messages as a JSON answer: its `json()` is the parsed batch. */
function asBatch(response: BufferedResponse, messages: unknown[]): BufferedResponse {
  return response.readAsJson(messages);
}

/** The same response with another body stream. */
export function rebody(response: Response, body: ReadableStream<Uint8Array>): Response {
  const rebodied = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(rebodied, "url", { value: response.url });
  if (response.redirected) Object.defineProperty(rebodied, "redirected", { value: true });
  return rebodied;
}
