/**
 * What Lambda's Node.js runtime gives a response-streaming handler, reduced to its contract: the
 * `awslambda` global (`streamifyResponse` marks a handler; `HttpResponseStream.from` puts the JSON
 * prelude and 8 NUL bytes before the first write) and an invoker that calls a marked handler with
 * `(event, responseStream, context)` and reads the bytes as a Function URL does: prelude, then body.
 * Plain JS: invoke-bundle.mjs runs it under Node without a TypeScript loader.
 */
import { once } from "node:events";
import { Writable } from "node:stream";

const STREAMING = Symbol.for("aws.lambda.runtime.handler.streaming");
const PRELUDE_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response";
const DELIMITER = new Uint8Array(8);

export const awslambda = {
  streamifyResponse(handler) {
    handler[STREAMING] = "response";
    return handler;
  },
  HttpResponseStream: {
    from(responseStream, prelude) {
      responseStream.setContentType(PRELUDE_CONTENT_TYPE);
      const metadata = JSON.stringify(prelude);
      responseStream._onBeforeFirstWrite = (write) => {
        write(metadata);
        write(DELIMITER);
      };
      return responseStream;
    },
  },
};

/** Sets the `awslambda` global (before a handler module is imported); returns its undo. */
export function installLambdaRuntime() {
  const had = Object.hasOwn(globalThis, "awslambda");
  const previous = globalThis.awslambda;
  globalThis.awslambda = awslambda;
  return () => {
    if (had) globalThis.awslambda = previous;
    else delete globalThis.awslambda;
  };
}

/** Did `awslambda.streamifyResponse` mark this handler? (How the runtime picks the streaming path.) */
export function isStreamingHandler(handler) {
  return typeof handler === "function" && handler[STREAMING] === "response";
}

/**
 * Invokes a streaming handler as the runtime does and answers what the client of the Function URL
 * gets. `onBody(text)` sees each body write when it is written, before the handler has returned.
 */
export async function invokeStreaming(handler, event, context, { onBody } = {}) {
  if (!isStreamingHandler(handler)) throw new Error("not a streaming handler (awslambda.streamifyResponse)");
  let contentType = "application/octet-stream";
  let written = false;
  const preludeBytes = [];
  const bodyBytes = [];
  const bodyChunks = [];
  const responseStream = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  responseStream.setContentType = (type) => {
    if (written) throw new Error("setContentType after the first write");
    contentType = type;
  };
  const write = responseStream.write.bind(responseStream);
  responseStream.write = (chunk, ...rest) => {
    if (!written) {
      written = true;
      responseStream._onBeforeFirstWrite?.((bytes) => {
        preludeBytes.push(Buffer.from(bytes));
        return write(bytes);
      });
    }
    const bytes = Buffer.from(chunk);
    const text = bytes.toString("utf8");
    bodyBytes.push(bytes);
    bodyChunks.push(text);
    onBody?.(text);
    return write(chunk, ...rest);
  };
  const end = responseStream.end.bind(responseStream);
  responseStream.end = (chunk, ...rest) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return end(chunk, ...rest);
    responseStream.write(chunk);
    return end(...rest);
  };

  await handler(event, responseStream, context);
  // The runtime fails an invocation whose handler returned before ending the stream.
  if (!responseStream.writableEnded) throw new Error("Response stream is not finished.");
  if (!responseStream.writableFinished) await once(responseStream, "finish");

  const body = Buffer.concat(bodyBytes).toString("utf8");
  if (contentType !== PRELUDE_CONTENT_TYPE)
    return { statusCode: 200, headers: { "content-type": contentType }, cookies: [], body, bodyChunks };
  const prelude = Buffer.concat(preludeBytes);
  const delimiterAt = prelude.indexOf(Buffer.from(DELIMITER));
  if (delimiterAt < 0 || delimiterAt !== prelude.length - DELIMITER.length)
    throw new Error("the prelude is not JSON followed by 8 NUL bytes");
  const {
    statusCode = 200,
    headers = {},
    cookies = [],
  } = JSON.parse(prelude.subarray(0, delimiterAt).toString());
  return { statusCode, headers, cookies, body, bodyChunks };
}
