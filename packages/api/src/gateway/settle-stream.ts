/**
 * An event-stream answer that is over at once — a call's result, and nothing after it — goes out as
 * one body: its headers and events in one write, instead of the headers first and each event after.
 * One still going (progress first, a question, a long call) streams as it would have, its first
 * bytes included; the wait for them is bounded, so a slow call's headers are late by that at most.
 * A priming event (an id to resume from, with no message: what a resumable stream opens with) is not
 * what the client waits for: it goes out with the message after it.
 */

/**
 * How long an event stream may wait for its first bytes before its headers go out alone: long enough
 * for a call under load, short enough that no client waits on headers it could use.
 */
export const SETTLE_MS = 1_000;

type Read = { done: true; value?: undefined } | { done: false; value: Uint8Array };

/** Answers {@link settleEventStream} made whole: nothing of them is still to come. */
const settled = new WeakSet<Response>();
/** Answers shaped by these rules already (whole, or streaming because they must): not read again. */
const shaped = new WeakSet<Response>();

/**
 * An event-stream answer made under these rules elsewhere (a session's fast path): `complete` when
 * `body` is all of it, else a stream still going.
 */
export function settledAnswer(
  body: string | ReadableStream<Uint8Array>,
  init: ResponseInit,
  complete = true,
): Response {
  const answer = new Response(body, init);
  shaped.add(answer);
  if (complete) settled.add(answer);
  return answer;
}

/** True for an answer whose body is all there now (no event stream still going). */
export function isComplete(response: Response): boolean {
  return settled.has(response) || !isEventStream(response);
}

/** True for an answer with a body that is an event stream. */
export function isEventStream(response: Response): boolean {
  return (
    Boolean(response.body) && (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
  );
}

/** `response`, whole when its event stream ends with what is ready now; else streaming as before. */
export async function settleEventStream(response: Response, waitMs = SETTLE_MS): Promise<Response> {
  // Before its body or headers are touched: on Node those make the adapter's light answer a full one.
  if (shaped.has(response)) return response;
  const body = response.body;
  if (!body || !isEventStream(response)) return response;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let pending: Promise<Read> = reader.read();
  let timer: NodeJS.Timeout | undefined;
  // The first message may take as long as the call: bounded by a timer. Later ones must be ready now.
  let later: Promise<undefined> = new Promise((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  try {
    for (;;) {
      const result = await Promise.race([pending, later]);
      if (result === undefined) break;
      if (result.done) {
        const whole = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
        const answer = new Response(whole, { status: response.status, headers: response.headers });
        settled.add(answer);
        return answer;
      }
      chunks.push(result.value);
      pending = reader.read();
      if (!carriesMessage(result.value)) continue;
      clearTimeout(timer);
      later = new Promise((resolve) => setImmediate(() => resolve(undefined)));
    }
  } catch {
    // The stream failed: the streamed answer below fails the same way as it is read.
  } finally {
    clearTimeout(timer);
  }
  return new Response(resumed(chunks, pending, reader), {
    status: response.status,
    headers: response.headers,
  });
}

/** Whether an event-stream chunk holds a message: a `data:` line with something in it. */
function carriesMessage(chunk: Uint8Array): boolean {
  return /^data: ?\S/m.test(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8"));
}

/** The chunks read so far, then the read under way, then the rest of `reader`. */
function resumed(
  chunks: Uint8Array[],
  pending: Promise<Read>,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  let next: Promise<Read> | undefined = pending;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = chunks.shift();
      if (chunk) return controller.enqueue(chunk);
      const result = await (next ?? reader.read());
      next = undefined;
      if (result.done) controller.close();
      else controller.enqueue(result.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
