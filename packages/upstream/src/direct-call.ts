/**
 * The warm `tools/call` of a 2025 streamable-HTTP session, sent below the SDK's client: the request
 * is written once, as the SDK would write it, and an answer that arrives whole and plainly well formed
 * (a text result) is returned without the SDK's per-message parsing and result validation. Anything
 * else — an error, an ask, a redirect, a stream still open, a failed request, a result the SDK would
 * have to judge — is handed to the SDK as though its own request had brought it: the SDK makes the
 * same request (the same id: {@link SdkCall}), and {@link DirectCalls.sdkFetch} answers it with what
 * already came, sending nothing. So every outcome but the plain one is the SDK's own, by construction.
 */
import {
  type CallToolRequest,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/client";
import { BufferedResponse, mediaTypeOf } from "./buffered-response";
import { rebody } from "./call-context";
import { MAX_CALL_MS } from "./limits";
import { whenAborted } from "./when-aborted";

/**
 * Ids of direct requests start here: far above the SDK's own (counted from 0 per session), within
 * JSON's safe integers — so an upstream that takes only numeric ids takes these too.
 */
const DIRECT_ID_BASE = 2 ** 40;

/** What a direct call was given: the call's bound and cancellation, and the headers of its call. */
export interface DirectCallOptions {
  timeout: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/**
 * Has the SDK make the call as request `id` (the direct request's), within the bounds given (and with
 * the signal given, when there is one: it carries the caller's).
 */
export type SdkCall = (
  id: number,
  options: Pick<RequestOptions, "timeout" | "maxTotalTimeout" | "signal">,
) => Promise<Record<string, unknown>>;

/** What a direct request brought, kept for the SDK's request for it. */
type Brought = { response: Response } | { error: unknown };

/** One session's direct calls. */
export class DirectCalls {
  #lastId = 0;
  #closed = false;
  /** The session's request headers, and the session id and version they were made for. */
  #fixed: { key: string; headers: Record<string, string> } | undefined;
  /** Answers waiting for the SDK's request for them, by the id of the request that brought them. */
  readonly #waiting = new Map<number, Brought>();
  /**
   * Direct requests still open — unanswered, or an answer handed over still streaming: ended when the
   * session closes.
   */
  readonly #open = new Set<AbortController>();

  /**
   * @param url the session's endpoint.
   * @param send the session's fetch below the SDK (the call router's tap and everything under it).
   * @param request what the SDK's transport sends with every request: the target's headers, the
   *   session id and protocol version (read at each call: the session id comes with initialize).
   * @param notify sends a notification through the SDK's client (a cancellation).
   */
  constructor(
    private readonly url: URL,
    private readonly send: typeof fetch,
    private readonly request: () => {
      headers: Record<string, string>;
      sessionId?: string;
      protocolVersion: string;
    },
    private readonly notify: (notification: {
      method: string;
      params: Record<string, unknown>;
    }) => Promise<void>,
  ) {}

  /**
   * The fetch the SDK's transport sends through (`inner`: the rest of the session's fetch): the SDK's
   * request for a handed-over answer gets that answer, and nothing is sent. A direct request is never
   * sent again from here (a redirect the SDK follows goes elsewhere, and may).
   */
  sdkFetch(inner: typeof fetch): typeof fetch {
    return async (input, init) => {
      const id = directIdOf(init);
      if (id === undefined) return inner(input, init);
      const brought = this.#waiting.get(id);
      if (brought) {
        this.#waiting.delete(id);
        if ("error" in brought) throw brought.error;
        return brought.response;
      }
      if (String(input) === this.url.href) throw new Error(`tool call ${id} was sent already`);
      return inner(input, init);
    };
  }

  /** Ends the direct requests still open, as closing the SDK's transport ends its own; none are made after. */
  close(): void {
    this.#closed = true;
    for (const controller of this.#open) controller.abort(new Error("the session closed"));
    this.#open.clear();
  }

  /**
   * Calls a tool directly (see the module's comment): a plain result comes back from here; anything
   * else through `sdkCall`.
   */
  async call(
    params: CallToolRequest["params"],
    options: DirectCallOptions,
    sdkCall: SdkCall,
  ): Promise<Record<string, unknown>> {
    const { signal } = options;
    const id = DIRECT_ID_BASE + ++this.#lastId;
    // Already cancelled, broken or closed: the SDK says so, as it would have.
    if (signal?.aborted || this.#closed) return sdkCall(id, { timeout: options.timeout });
    const started = performance.now();
    const { controller, release } = timeWindow(options.timeout, options.timeout, signal);
    this.#open.add(controller);
    let brought: Brought;
    try {
      brought = { response: await this.send(this.url, this.#init(id, params, options, controller.signal)) };
    } catch (error) {
      brought = { error };
    } finally {
      release();
    }
    if (controller.signal.aborted) {
      // The call's bound passed, its caller left or its session closed before the answer began: the
      // upstream is told.
      this.#open.delete(controller);
      this.#cancel(id, controller.signal.reason);
      throw controller.signal.reason;
    }
    const elapsed = performance.now() - started;
    let window: TimeWindow | undefined;
    if ("response" in brought && !(brought.response instanceof BufferedResponse)) {
      // Still streaming: open until it ends (or the session closes). The SDK's first window is what is
      // left of the call's time (as its own would have started at the request), until progress comes;
      // then its windows, each the whole timeout, as on its own path.
      window = timeWindow(options.timeout - elapsed, options.timeout, signal);
      brought = { response: this.#untilEnded(brought.response, controller, id, window.stop) };
    } else {
      this.#open.delete(controller);
      const result = "response" in brought ? plainResult(brought.response, id) : undefined;
      if (result) return result;
    }
    this.#waiting.set(id, brought);
    try {
      // Progress resets the SDK's window to the call's whole timeout, as on its own path.
      return await sdkCall(id, {
        timeout: options.timeout,
        maxTotalTimeout: Math.max(1, MAX_CALL_MS - elapsed),
        ...(window ? { signal: window.controller.signal } : {}),
      });
    } finally {
      window?.release();
      // Never asked for (the SDK failed before sending): a stream still open is let go of.
      if (this.#waiting.delete(id) && "response" in brought) brought.response.body?.cancel().catch(() => {});
    }
  }

  /**
   * An answer that still streams, its request open until the stream ends; `progressed` is told when
   * the first progress on the request's token passes.
   */
  #untilEnded(response: Response, request: AbortController, id: number, progressed: () => void): Response {
    const done = () => {
      this.#open.delete(request);
    };
    if (!response.body) {
      done();
      return response;
    }
    const token = `"progressToken":${id}`;
    const decoder = new TextDecoder();
    let seen = false;
    let tail = "";
    const watch = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!seen) {
          const text = tail + decoder.decode(chunk, { stream: true });
          seen = text.includes(token);
          if (seen) progressed();
          else tail = text.slice(-token.length);
        }
        controller.enqueue(chunk);
      },
      flush: done,
      cancel: done,
    });
    return rebody(response, response.body.pipeThrough(watch));
  }

  /** The request as the SDK's transport writes it, the call's progress token its id (as the SDK's is). */
  #init(
    id: number,
    params: CallToolRequest["params"],
    options: DirectCallOptions,
    signal: AbortSignal,
  ): RequestInit {
    const headers = { ...this.#sessionHeaders(), ...options.headers };
    const message = {
      method: "tools/call",
      params: { ...params, _meta: { ...params._meta, progressToken: id } },
      jsonrpc: "2.0",
      id,
    };
    // Redirects as the SDK's transport takes them: not here (it follows a same-origin 307/308 itself).
    return { method: "POST", headers, body: JSON.stringify(message), signal, redirect: "manual" };
  }

  /**
   * The headers the SDK's transport sends every request of the session with (names in lower case),
   * made again only when the session's id or version changes.
   */
  #sessionHeaders(): Record<string, string> {
    const { headers: base, sessionId, protocolVersion } = this.request();
    const key = `${sessionId ?? ""} ${protocolVersion}`;
    if (this.#fixed?.key === key) return this.#fixed.headers;
    const headers = new Headers(base);
    if (sessionId) headers.set("mcp-session-id", sessionId);
    headers.set("mcp-protocol-version", protocolVersion);
    headers.set("content-type", "application/json");
    const accepted =
      headers
        .get("accept")
        ?.split(",")
        .map((type) => type.trim().toLowerCase()) ?? [];
    headers.set("accept", [...new Set([...accepted, "application/json", "text/event-stream"])].join(", "));
    this.#fixed = { key, headers: Object.fromEntries(headers) };
    return this.#fixed.headers;
  }

  /** Tells the upstream a direct request is given up on (best effort, in the words the SDK uses). */
  #cancel(id: number, reason: unknown): void {
    const params = { requestId: id, reason: String(reason) };
    this.notify({ method: "notifications/cancelled", params }).catch(() => undefined);
  }
}

/** A window of time on a request, as {@link timeWindow} makes it. */
interface TimeWindow {
  /** Aborts when the window passes (the SDK's timeout error), or with the caller's reason. */
  controller: AbortController;
  /** The window no longer passes (the caller's signal still aborts it). */
  stop(): void;
  /** Lets go of the timer and the caller's signal. */
  release(): void;
}

/** A window of `ms` on a request bound by `timeout`, which the caller's signal also ends. */
function timeWindow(ms: number, timeout: number, caller: AbortSignal | undefined): TimeWindow {
  const controller = new AbortController();
  const timer = setTimeout(
    () => {
      controller.abort(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout }));
    },
    Math.max(1, ms),
  );
  const unlink = caller ? whenAborted(caller, () => controller.abort(caller.reason)) : () => {};
  return {
    controller,
    stop: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer);
      unlink();
    },
  };
}

/**
 * The id of a direct request, when `init` is one (the SDK writes a request's method first and its id
 * last): a `tools/call` the SDK makes for an answer handed over, or that answer's redirect.
 */
export function directIdOf(init: RequestInit | undefined): number | undefined {
  if (init?.method !== "POST" || typeof init.body !== "string") return undefined;
  if (!init.body.startsWith('{"method":"tools/call",')) return undefined;
  const tail = /"id":(\d{13,16})\}$/.exec(init.body.slice(-32));
  const id = tail ? Number(tail[1]) : undefined;
  return id !== undefined && id >= DIRECT_ID_BASE && Number.isSafeInteger(id) ? id : undefined;
}

/**
 * The result of an answer that came whole (one read) and holds nothing but the direct request's
 * response, or that and progress on it: a result of text parts — in the order and shape the SDK's
 * own validation returns it — else undefined (the SDK reads the answer).
 */
function plainResult(response: Response, id: number): Record<string, unknown> | undefined {
  if (!(response instanceof BufferedResponse) || response.status !== 200) return undefined;
  const type = mediaTypeOf(response);
  if (type !== "application/json") return undefined;
  let messages: unknown;
  try {
    messages = response.peekJson();
  } catch {
    return undefined;
  }
  let result: unknown;
  for (const message of Array.isArray(messages) ? messages : [messages]) {
    const record = message as {
      jsonrpc?: unknown;
      id?: unknown;
      method?: unknown;
      params?: unknown;
      result?: unknown;
    };
    if (!record || typeof record !== "object" || record.jsonrpc !== "2.0") return undefined;
    const answers = record.id === id && "result" in record && !("error" in record) && !("method" in record);
    if (answers && result === undefined) result = record.result;
    else if (!isOwnProgress(record, id)) return undefined;
  }
  return plainToolResult(result);
}

function isOwnProgress(message: { id?: unknown; method?: unknown; params?: unknown }, id: number): boolean {
  if (message.method !== "notifications/progress" || "id" in message) return false;
  return (message.params as { progressToken?: unknown } | undefined)?.progressToken === id;
}

/**
 * A tool result of text parts alone — `content` of `{type: "text", text}`, perhaps `structuredContent`
 * (an object) and `isError` (a boolean), nothing else — rebuilt as the SDK's validation returns one;
 * undefined for anything else.
 */
export function plainToolResult(result: unknown): Record<string, unknown> | undefined {
  if (!result || typeof result !== "object" || Array.isArray(result)) return undefined;
  const { content, structuredContent, isError, ...rest } = result as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !Array.isArray(content)) return undefined;
  if (isError !== undefined && typeof isError !== "boolean") return undefined;
  if (structuredContent !== undefined && !isPlainObject(structuredContent)) return undefined;
  const parts: Array<{ type: "text"; text: string }> = [];
  for (const part of content) {
    if (!isPlainObject(part)) return undefined;
    const { type, text, ...other } = part;
    if (type !== "text" || typeof text !== "string" || Object.keys(other).length > 0) return undefined;
    parts.push({ type, text });
  }
  return {
    content: parts,
    ...(structuredContent !== undefined ? { structuredContent } : {}),
    ...(isError !== undefined ? { isError } : {}),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
