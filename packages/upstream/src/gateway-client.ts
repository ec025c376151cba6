import {
  type CallToolRequest,
  Client,
  type JSONRPCErrorResponse,
  type JSONRPCResponse,
  type JSONRPCResultResponse,
  ProtocolError,
  type RequestOptions,
  type StandardSchemaV1,
} from "@modelcontextprotocol/client";
import { scrubJson } from "./classify-failure";

/** The era codec's own result check, as `Client.request()` would use it. */
type ResultCheck = StandardSchemaV1<unknown, Record<string, unknown>>;

/**
 * The SDK's `Client`, with a `tools/call` that goes through the same request funnel (era gate, result
 * decoding, the era's own result validation) without the probe `request()` makes per call: asked for a
 * spec method without a result schema, it first validates `undefined` against the era's schema to learn
 * whether there is one — a validation failure built and formatted into a message on every request. The
 * check is made here once per era, from the same codec and with the same messages.
 *
 * And a response settles its request only after the notifications that arrived before it: the SDK
 * hands a notification to its handler a microtask after it arrives but settles a response at once,
 * dropping the request's progress handler — so progress that came in the same read as the result
 * (one JSON batch, or a finished event stream) would otherwise find no one to tell.
 */
export class GatewayClient extends Client {
  #toolResult: { codec: object; check: ResultCheck } | undefined;
  /** Listeners of progress on tokens the gateway chose itself (a task's, valid until the task ends). */
  readonly #progressListeners = new Map<string, (params: Record<string, unknown>) => void>();
  #lastToken = 0;

  constructor(...args: ConstructorParameters<typeof Client>) {
    super(...args);
    this.setNotificationHandler("notifications/progress", (notification) => {
      const listener = this.#progressListeners.get(String(notification.params.progressToken));
      if (listener) listener(notification.params as Record<string, unknown>);
      else (this as unknown as SdkProgress)._onprogress(notification);
    });
  }

  /**
   * A fresh progress token of the gateway's own (never one the SDK numbers its requests by), whose
   * progress notifications go to `listener` — outliving any one request — until `release()`.
   */
  listenProgress(listener: (params: Record<string, unknown>) => void): { token: string; release(): void } {
    const token = `mcpgw-${++this.#lastToken}`;
    this.#progressListeners.set(token, listener);
    return { token, release: () => this.#progressListeners.delete(token) };
  }

  /** `tools/call` with `params` as given, its result validated by the negotiated era's codec. */
  requestToolCall(
    params: CallToolRequest["params"],
    options?: RequestOptions,
  ): Promise<Record<string, unknown>> {
    return this.request({ method: "tools/call", params }, this.#toolResultCheck(), options);
  }

  /**
   * {@link requestToolCall} sent as request `id` — one the SDK never numbers a request with (a direct
   * call's, whose answer the SDK reads now): its progress token, its cancellation and its answer all
   * carry that id. The SDK numbers its requests on from where it was.
   */
  requestToolCallAs(
    id: number,
    params: CallToolRequest["params"],
    options?: RequestOptions,
  ): Promise<Record<string, unknown>> {
    const numbering = this as unknown as SdkNumbering;
    const next = numbering._requestMessageId;
    // Without the counter the SDK's request would go out again under an id of its own.
    if (typeof next !== "number") throw new Error("the SDK's request numbering is not where it was");
    numbering._requestMessageId = id;
    try {
      // The SDK takes its request's id as it is called, before anything is awaited.
      return this.requestToolCall(params, options);
    } finally {
      numbering._requestMessageId = next;
    }
  }

  /**
   * A request whose result is any JSON object, as the upstream sent it — for methods the gateway reads
   * itself, such as the 2025 tasks methods (`tasks/result`: a tool's result, whatever it holds).
   */
  requestObject(
    request: { method: string; params?: Record<string, unknown> },
    options?: RequestOptions,
  ): Promise<Record<string, unknown>> {
    return this.request(request as never, OBJECT_RESULT, options);
  }

  /**
   * Settles the request after every notification dispatched before it (one microtask later). Keeps an
   * error response's `data` as sent before the SDK reads it ({@link errorDataAsSent}); reads a 2026
   * result without `resultType` as complete when nothing in it says otherwise ({@link asComplete}).
   */
  protected override _onresponse(response: JSONRPCResponse | JSONRPCErrorResponse): void {
    let settled = response;
    if ("error" in response) rememberErrorData(response.error.data);
    else if (this.getProtocolEra() === "modern") settled = asComplete(response as JSONRPCResultResponse);
    queueMicrotask(() => {
      try {
        super._onresponse(settled);
      } catch (error) {
        // Where the transport's own dispatch would have caught it: the client's error handler.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  #toolResultCheck(): ResultCheck {
    const codec = this._wireCodec();
    if (this.#toolResult?.codec !== codec) {
      const method = "tools/call";
      const check: ResultCheck = {
        "~standard": {
          version: 1,
          vendor: "mcp-wire-codec",
          validate(value) {
            const outcome = codec.validateResult(method, value);
            if (outcome.ok) return { value: outcome.value as Record<string, unknown> };
            return {
              issues: [{ message: outcome.reason === "invalid" ? outcome.message : `not-in-era: ${method}` }],
            };
          },
        },
      };
      this.#toolResult = { codec, check };
    }
    return this.#toolResult.check;
  }
}

/** The counter the SDK numbers its requests with. */
interface SdkNumbering {
  _requestMessageId: number;
}

/** The SDK's own progress dispatch (by request id), which the gateway's handler falls back to. */
interface SdkProgress {
  _onprogress(notification: unknown): void;
}

/** Any JSON object. */
const OBJECT_RESULT: ResultCheck = {
  "~standard": {
    version: 1,
    vendor: "mcpgw",
    validate(value) {
      if (typeof value === "object" && value !== null && !Array.isArray(value))
        return { value: value as Record<string, unknown> };
      return { issues: [{ message: "the result is not an object" }] };
    },
  },
};

/**
 * The parts of an error's `data` the SDK builds its own error classes from (a -32042's `elicitations`,
 * an unsupported version's `supported`, a missing capability's `requiredCapabilities`) — keeping those
 * and dropping the rest of `data` — each mapped to the whole `data` it came in.
 */
const DATA_PARTS = ["elicitations", "supported", "requiredCapabilities"] as const;
const dataAsSent = new WeakMap<object, unknown>();

function partsOf(data: unknown): object[] {
  if (typeof data !== "object" || data === null) return [];
  const record = data as Record<string, unknown>;
  return DATA_PARTS.flatMap((key) => {
    const part = record[key];
    return typeof part === "object" && part !== null ? [part] : [];
  });
}

function rememberErrorData(data: unknown): void {
  for (const part of partsOf(data)) dataAsSent.set(part, data);
}

/** An upstream JSON-RPC error's `data` as the upstream sent it (the SDK's error classes keep only part of it). */
export function errorDataAsSent(error: ProtocolError): unknown {
  for (const part of partsOf(error.data)) if (dataAsSent.has(part)) return dataAsSent.get(part);
  return error.data;
}

/**
 * An upstream JSON-RPC error whose `data` (as sent) is scrubbed of `secrets` as its message is: an
 * upstream may echo the credentials it was sent anywhere in its answer. The same error when its data
 * holds none; its data dropped when scrubbing leaves no JSON.
 */
export function withScrubbedData(error: ProtocolError, secrets: Iterable<string>): ProtocolError {
  const sent = errorDataAsSent(error);
  const data = scrubJson(sent, secrets);
  if (data === sent) return error;
  return new ProtocolError(error.code, error.message, data);
}

/** What only an unfinished (`input_required`) or deferred (task) result holds. */
const NOT_COMPLETE_MARKS = ["inputRequests", "requestState", "task"] as const;

/**
 * A 2026 result that names no `resultType` (servers written before 2026-07-28 leave it out) read as
 * `complete` — unless it holds what only another kind of result does, which leaves it ambiguous: that
 * one goes on as sent, for the SDK to refuse saying what is missing.
 */
export function asComplete(response: JSONRPCResultResponse): JSONRPCResultResponse {
  const result = response.result as Record<string, unknown>;
  if (typeof result !== "object" || result === null || result.resultType !== undefined) return response;
  if (NOT_COMPLETE_MARKS.some((mark) => mark in result)) return response;
  return { ...response, result: { ...result, resultType: "complete" } };
}
