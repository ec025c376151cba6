import { traceFields } from "@mcpgw/core";

/**
 * `inner` with the active span's W3C trace context (`traceparent`, and `tracestate` or none) on every
 * request it sends — an upstream (or the stdio runner) that traces joins the caller's trace. Requests
 * sent outside any span go as they came.
 */
export function withTraceHeaders(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const { traceparent, tracestate } = traceFields();
    if (traceparent === undefined) return inner(input, init);
    const fields = { traceparent, tracestate };
    // The SDK's transport makes a new Headers for every request it sends: set there, not copied (a
    // copy is a validation of every header again, on every call).
    if (init?.headers instanceof Headers) {
      setTraceHeaders(init.headers, fields);
      return inner(input, init);
    }
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    setTraceHeaders(headers, fields);
    return inner(input, { ...init, headers });
  };
}

/** `headers` carrying `fields`: a `tracestate` of another trace context does not stay beside them. */
function setTraceHeaders(
  headers: Headers,
  fields: { traceparent: string; tracestate?: string | undefined },
): void {
  headers.set("traceparent", fields.traceparent);
  if (fields.tracestate) headers.set("tracestate", fields.tracestate);
  else headers.delete("tracestate");
}
