import { traceFields } from "@mcpgw/core";

/**
 * `inner` with the active span's W3C trace context (`traceparent`, `tracestate`) on every request it
 * sends — an upstream (or the stdio runner) that traces joins the caller's trace. Requests sent
 * outside any span go as they came.
 */
export function withTraceHeaders(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const fields = Object.entries(traceFields());
    if (fields.length === 0) return inner(input, init);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    for (const [name, value] of fields) headers.set(name, value);
    return inner(input, { ...init, headers });
  };
}
