/**
 * Who a message from an upstream belongs to. One upstream session serves many callers at once, but
 * what it sends mid-call — a log line, or (2025 era) a request to ask the user or the model — belongs
 * to one call. Streamable HTTP sends those on the response stream of the POST that carried the call;
 * the session's fetch is tapped so every message on a call's stream is tied to that call before the
 * SDK reads it. The call is known at fetch time from the async context the call runs in.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createParser } from "eventsource-parser";

/** The log levels of MCP, lowest first. */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/** A request an upstream sends its client mid-call: elicitation, sampling or roots. */
export interface UpstreamAsk {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params?: Record<string, unknown>;
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

/** The calls in flight on one session, and which of them each mid-call request belongs to. */
export class CallRouter {
  private readonly current = new AsyncLocalStorage<CallContext>();
  private readonly inFlight = new Set<CallContext>();
  /** Upstream request id → the call whose stream it came on (until it is answered). */
  private readonly asks = new Map<JsonRpcId, CallContext>();

  /** Runs a call with `context` as the owner of whatever its requests' streams carry. */
  async run<T>(context: CallContext | undefined, call: () => Promise<T>): Promise<T> {
    if (!context) return call();
    this.inFlight.add(context);
    try {
      return await this.current.run(context, call);
    } finally {
      this.inFlight.delete(context);
      for (const [id, owner] of this.asks) if (owner === context) this.asks.delete(id);
    }
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
    return this.inFlight.size === 1 ? this.inFlight.values().next().value : undefined;
  }

  /** A fetch whose SSE response streams tie each message they carry to the call that made the request. */
  tap(fetchImpl: typeof fetch): typeof fetch {
    return async (input, init) => {
      const context = this.current.getStore();
      const response = await fetchImpl(input, init);
      const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
      if (!context || !response.body || type !== "text/event-stream") return response;
      return rebody(response, response.body.pipeThrough(this.observer(context)));
    };
  }

  /** Passes the stream through unchanged, noting each message before the SDK sees it. */
  private observer(context: CallContext): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    const parser = createParser({ onEvent: (event) => this.note(context, event.data) });
    return new TransformStream({
      transform(chunk, controller) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
    });
  }

  private note(context: CallContext, data: string): void {
    let message: { id?: unknown; method?: unknown; params?: unknown };
    try {
      message = JSON.parse(data) as typeof message;
    } catch {
      return;
    }
    if (typeof message?.method !== "string") return;
    const { id, method, params } = message;
    if (typeof id === "string" || typeof id === "number") this.asks.set(id, context);
    else if (method === "notifications/message" && params && typeof params === "object")
      context.onLog?.(params as Record<string, unknown>);
  }
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
