/**
 * Logs an upstream sends outside any call. A 2025 streamable-HTTP server sends a `notifications/message`
 * that belongs to no request on its standalone GET stream: that line is the session's, not one
 * caller's (a call's own lines come on its POST's stream, see `call-context`). The session's fetch is
 * tapped so those lines — and only those — are told to a listener before the SDK reads them.
 *
 * A GET may also resume a call's POST stream (the SDK reconnects it with `Last-Event-ID`): what that
 * carries is the call's. So a GET counts as the standalone stream only without `Last-Event-ID`, or with
 * the id of an event a standalone stream itself carried; any other GET is left alone.
 */
import { createParser } from "eventsource-parser";
import { mediaTypeOf } from "./buffered-response";
import { rebody } from "./call-context";

/** Told each log line an upstream sent outside any call: its `notifications/message` params. */
export type SessionLogListener = (params: Record<string, unknown>) => void;

/** Event ids of the standalone stream remembered, for telling its resumption from a call's. */
const KEPT_EVENT_IDS = 16;

/** A fetch whose standalone GET event streams tell `onLog` each log line they carry. */
export function tapSessionLogs(fetchImpl: typeof fetch, onLog: SessionLogListener): typeof fetch {
  const standaloneIds = new Set<string>();
  const remember = (id: string) => {
    standaloneIds.add(id);
    if (standaloneIds.size > KEPT_EVENT_IDS)
      standaloneIds.delete(standaloneIds.values().next().value as string);
  };
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if ((init?.method ?? "GET").toUpperCase() !== "GET" || !response.ok || !response.body) return response;
    if (mediaTypeOf(response) !== "text/event-stream") return response;
    const resumed = new Headers(init?.headers).get("last-event-id");
    if (resumed !== null && !standaloneIds.has(resumed)) return response;
    return rebody(response, response.body.pipeThrough(logObserver(onLog, remember)));
  };
}

/** Passes an event stream through unchanged, telling `onLog` of each log notification in it. */
function logObserver(
  onLog: SessionLogListener,
  remember: (id: string) => void,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (event) => {
      if (event.id) remember(event.id);
      const params = logParams(event.event, event.data);
      if (!params) return;
      try {
        onLog(params);
      } catch {
        // A listener's failure is its own: the stream goes on.
      }
    },
  });
  return new TransformStream({
    transform(chunk, controller) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      controller.enqueue(chunk);
    },
  });
}

/** The params of a `notifications/message` notification carried by an SSE event, if it is one. */
export function logParams(type: string | undefined, data: string): Record<string, unknown> | undefined {
  if ((type !== undefined && type !== "message") || !data.includes("notifications/message")) return undefined;
  let message: { id?: unknown; method?: unknown; params?: unknown } | null;
  try {
    message = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (message?.method !== "notifications/message" || message.id !== undefined) return undefined;
  const { params } = message;
  return params && typeof params === "object" && !Array.isArray(params)
    ? (params as Record<string, unknown>)
    : undefined;
}
