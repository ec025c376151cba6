/**
 * A 2025 session's standalone GET stream, as the gateway sees it: whether it is open now, since when
 * (the GET that opened it is when its caller last authenticated), and how much written to it its
 * client has not read yet. The SDK's server transport keeps none of that in sight (it writes to a
 * stream without looking at its queue), so the response body is drained from the SDK at once into a
 * queue of the gateway's own, measured in bytes: what a client that never reads costs is visible
 * there, and what the gateway adds to it can be held back.
 */
import { isEventStream } from "./settle-stream";

/** Unread bytes past which relayed lines skip a session's stream (they are dropped, not queued). */
export const MAX_UNREAD_BYTES = 256 * 1024;

/**
 * The SDK transport's id for the standalone stream (`_standaloneSseStreamId`): the stream a GET
 * resumes with an event id of it (the session's event store names events `<stream id>.<sequence>`).
 */
export const SDK_STANDALONE_STREAM_ID = "_GET_stream";

/** An open standalone stream. */
export interface StandaloneStream {
  /** When the GET that opened it was served (and its caller authenticated). */
  readonly openedAt: number;
  /** Bytes written to it (or on their way, {@link StandaloneStream.reserve}) that its client has not read yet. */
  readonly unreadBytes: number;
  /**
   * Counts `bytes` about to be written as unread already (the SDK writes them a moment later); the
   * function returned stops counting them, once they are written (and in the queue) or given up.
   */
  reserve(bytes: number): () => void;
}

/**
 * Whether a GET opens (or resumes) a session's standalone stream rather than resuming a call's:
 * it carries no `Last-Event-ID`, or one of the standalone stream's events.
 */
export function opensStandaloneStream(request: Request): boolean {
  if (request.method !== "GET") return false;
  const lastEventId = request.headers.get("last-event-id");
  // An empty header is none (the SDK opens the standalone stream for it).
  return !lastEventId || streamOfEventId(lastEventId) === SDK_STANDALONE_STREAM_ID;
}

/** The stream an event id of the session's event store belongs to. */
export function streamOfEventId(eventId: string): string {
  const dot = eventId.lastIndexOf(".");
  return dot === -1 ? eventId : eventId.slice(0, dot);
}

/**
 * `response` with its event stream drained into a byte-measured queue: `onOpen` is told the stream at
 * once, `onEnd` when it ends (the client went away, or the SDK closed it). Any other response is
 * returned as it is.
 */
export function trackStandalone(
  response: Response,
  onOpen: (stream: StandaloneStream) => void,
  onEnd: (stream: StandaloneStream) => void,
): Response {
  if (!response.ok || !response.body || !isEventStream(response)) return response;
  const reader = response.body.getReader();
  let queue: ReadableStreamDefaultController<Uint8Array> | undefined;
  let ended = false;
  let reserved = 0;
  const stream: StandaloneStream = {
    openedAt: Date.now(),
    get unreadBytes() {
      if (ended || !queue) return 0;
      return MAX_UNREAD_BYTES - (queue.desiredSize ?? MAX_UNREAD_BYTES) + reserved;
    },
    reserve(bytes) {
      reserved += bytes;
      let released = false;
      return () => {
        if (!released) reserved -= bytes;
        released = true;
      };
    },
  };
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd(stream);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        queue = controller;
      },
      cancel(reason) {
        end();
        return reader.cancel(reason).catch(() => undefined);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: MAX_UNREAD_BYTES }),
  );
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        queue?.enqueue(value);
      }
      queue?.close();
    } catch (error) {
      // The client went away (the queue is cancelled) or the SDK's stream broke: either way it is over,
      // and the client is told so (an error on a cancelled queue is a no-op).
      try {
        queue?.error(error);
      } catch {}
    } finally {
      end();
    }
  })();
  onOpen(stream);
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
