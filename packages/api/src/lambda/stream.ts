/**
 * An app as a Lambda response-streaming handler (a Function URL in RESPONSE_STREAM mode): the status
 * and headers go first, then the body as the app produces it, so SSE events reach the client one by one.
 */
import { flushingLogs } from "@mcpgw/core";
import { flushTelemetry } from "@mcpgw/telemetry";
import type { Env, Hono, Schema } from "hono";
import { streamHandle } from "hono/aws-lambda";

/** The part of the runtime's context a streaming handler changes. */
interface StreamingContext {
  callbackWaitsForEmptyEventLoop: boolean;
}

/** How the runtime calls a handler that `awslambda.streamifyResponse` marked. */
type StreamingHandler = (
  event: unknown,
  responseStream: NodeJS.WritableStream,
  context: StreamingContext,
) => Promise<void>;

declare global {
  /** Provided by Lambda's Node.js runtime, not imported: what response streaming is made of. */
  var awslambda: {
    streamifyResponse<H extends StreamingHandler>(handler: H): H;
    HttpResponseStream: {
      from(
        responseStream: NodeJS.WritableStream,
        prelude: { statusCode: number; headers?: Record<string, string>; cookies?: string[] },
      ): NodeJS.WritableStream;
    };
  };
}

/**
 * Hono's `streamHandle`, and one setting: the runtime takes the next invocation only once the event
 * loop is empty unless told not to wait — warm upstream sessions keep sockets open, so every invocation
 * would last until the function's timeout. The client's disconnect is not seen (the runtime reports
 * none): a request's signal never aborts; a stream ends when the app ends it or at the timeout. The
 * invocation's log lines are written, its spans exported and (when due) its metrics, before it ends.
 */
export function streamingHandler<E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  /** What must be done before the invocation ends (the audit writer's flush); never rejects. */
  beforeReturn?: () => Promise<void>,
): StreamingHandler {
  // Typed as a buffered handler by hono; it is the (event, responseStream, context) one.
  const respond = streamHandle(app) as unknown as StreamingHandler;
  return awslambda.streamifyResponse(
    flushingLogs(
      async (event: unknown, responseStream: NodeJS.WritableStream, context: StreamingContext) => {
        context.callbackWaitsForEmptyEventLoop = false;
        await respond(event, responseStream, context);
      },
      async () => {
        await Promise.all([beforeReturn?.(), flushTelemetry()]);
      },
    ),
  );
}
