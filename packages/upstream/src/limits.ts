/**
 * Every message from an upstream is bounded: one HTTP body, or one SSE event, at most `maxBytes`.
 * Past it the bytes are dropped as they arrive (never collected), and the request waiting for that
 * message fails with a clear error — the session itself stays up, so one huge answer costs its caller
 * a 502, not the server its `connected` status.
 */
import { describeBytes } from "@mcpgw/core";
import { BufferedResponse, mediaTypeOf } from "./buffered-response";
import { rebody } from "./call-context";

/**
 * The longest a call may run, however often progress extends it. Here, not beside the calls that
 * use it, so a plane that only needs the bound (the runner) does not bundle the MCP client with it.
 */
export const MAX_CALL_MS = 15 * 60_000;

/** The JSON-RPC error code (implementation-defined server range) of a message past the limit. */
export const MESSAGE_TOO_LARGE_CODE = -32070;
/** The gateway's own code for it, in the error's `data.code`. */
export const MESSAGE_TOO_LARGE = "upstream.response_too_large";

/** An upstream HTTP body grew past the limit; what was read of it is dropped. */
export class MessageTooLargeError extends Error {
  override readonly name = "MessageTooLargeError";
  constructor(readonly limitBytes: number) {
    super(tooLargeText(limitBytes));
  }
}

/** The sentence a person reads: what happened and which setting bounds it. */
export function tooLargeText(limitBytes: number): string {
  return `the upstream's message exceeded the ${describeBytes(limitBytes)} limit (MAX_UPSTREAM_MESSAGE_BYTES) and was dropped`;
}

/** True when an error (or a link of its cause chain) is a message past the limit. */
export function isMessageTooLarge(error: unknown): boolean {
  for (let link = error, depth = 0; link && depth < 8; depth++) {
    const { name, code, data, cause } = link as {
      name?: unknown;
      code?: unknown;
      data?: { code?: unknown };
      cause?: unknown;
    };
    if (name === "MessageTooLargeError") return true;
    if (code === MESSAGE_TOO_LARGE_CODE && data?.code === MESSAGE_TOO_LARGE) return true;
    link = cause;
  }
  return false;
}

/**
 * A fetch whose response bodies are bounded. A body (JSON or anything else) past `maxBytes` errors with
 * {@link MessageTooLargeError} once the limit is crossed. An SSE stream is bounded per event: an event
 * past the limit is cut off; on a POST's stream the requests it carried are answered with a JSON-RPC
 * error instead and the stream ends; on a GET stream the event is skipped and the stream goes on.
 */
export function limitResponses(fetchImpl: typeof fetch, maxBytes: number): typeof fetch {
  return async function limitedFetch(input, init) {
    const response = await fetchImpl(input, init);
    // A complete answer within the limit holds no message past it: nothing to count as it streams.
    if (response instanceof BufferedResponse && response.bytes.byteLength <= maxBytes) return response;
    if (!response.body) return response;
    const type = mediaTypeOf(response);
    const limiter =
      type === "text/event-stream" ? sseLimiter(maxBytes, requestIds(init?.body)) : bodyLimiter(maxBytes);
    return rebody(response, response.body.pipeThrough(limiter));
  };
}

/** Passes bytes through until `maxBytes`, then errors (which cancels the upstream body). */
function bodyLimiter(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > maxBytes) controller.error(new MessageTooLargeError(maxBytes));
      else controller.enqueue(chunk);
    },
  });
}

type JsonRpcId = string | number;

const LF = 0x0a;
const CR = 0x0d;
const encoder = new TextEncoder();
/** Ends a cut-off event as a type no MCP client reads, so its partial data is discarded downstream. */
const DROPPED_EVENT = encoder.encode("\nevent: mcpgw-dropped\n\n");

/**
 * Bounds each SSE event (the bytes between blank lines; CR, LF and CRLF all end a line). Events pass
 * through as they stream; one that crosses the limit is ended early as an ignored event type.
 */
function sseLimiter(maxBytes: number, ids: JsonRpcId[]): TransformStream<Uint8Array, Uint8Array> {
  let eventBytes = 0;
  let lineBytes = 0;
  let afterCR = false;
  let skipping = false;
  return new TransformStream({
    transform(chunk, controller) {
      let passFrom = 0;
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i];
        const lfOfCRLF = byte === LF && afterCR;
        afterCR = byte === CR;
        if (byte === LF || byte === CR) {
          if (lfOfCRLF) continue;
          if (lineBytes === 0) {
            // A blank line: the event ends here.
            if (skipping) {
              skipping = false;
              passFrom = i + 1;
            }
            eventBytes = 0;
          }
          lineBytes = 0;
          continue;
        }
        lineBytes++;
        if (skipping || ++eventBytes <= maxBytes) continue;
        controller.enqueue(chunk.subarray(passFrom, i));
        controller.enqueue(DROPPED_EVENT);
        if (ids.length > 0) {
          for (const id of ids) controller.enqueue(encoder.encode(tooLargeEvent(id, maxBytes)));
          controller.terminate();
          return;
        }
        skipping = true;
      }
      if (!skipping && passFrom < chunk.length) controller.enqueue(chunk.subarray(passFrom));
    },
  });
}

/** The JSON-RPC error answering request `id` in place of a message past the limit, as an SSE event. */
function tooLargeEvent(id: JsonRpcId, limitBytes: number): string {
  const message = {
    jsonrpc: "2.0",
    id,
    error: {
      code: MESSAGE_TOO_LARGE_CODE,
      message: tooLargeText(limitBytes),
      data: { code: MESSAGE_TOO_LARGE, limitBytes },
    },
  };
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Ids of the JSON-RPC requests in a POST body (the SDK sends a JSON string). */
function requestIds(body: unknown): JsonRpcId[] {
  if (typeof body !== "string") return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((message) => {
      const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
      return typeof method === "string" && (typeof id === "string" || typeof id === "number") ? [id] : [];
    });
  } catch {
    return [];
  }
}
