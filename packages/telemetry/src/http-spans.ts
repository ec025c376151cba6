/** A server span per HTTP request, named by its route — never by its raw URL, which may carry secrets. */
import { type ActiveSpan, beginSpan, remoteContext, SpanKind } from "@mcpgw/core";
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";

/**
 * Hono middleware: each request runs inside a server span continuing the caller's valid W3C
 * `traceparent` (and `tracestate`) — that request only: a warm session shared with others is opened
 * outside it — named `<METHOD> <route>` once routed (`POST /mcp/{server}`), with the method, route and
 * status as attributes; a 5xx marks it failed.
 */
export function traceRequests() {
  return createMiddleware(async function traceRequest(c, next) {
    const parent = remoteContext({
      traceparent: c.req.header("traceparent"),
      tracestate: c.req.header("tracestate"),
    });
    const method = c.req.method;
    const request = beginSpan(method, {
      kind: SpanKind.SERVER,
      parent,
      attributes: { "http.request.method": method },
    });
    try {
      await request.run(next);
    } finally {
      if (!request.span.isRecording()) request.end();
      else endRequest(request, method, routeTemplate(routePath(c)), c.res.status);
    }
  });
}

/** Names a recorded request's span by its route and ends it with its route and status. */
function endRequest(request: ActiveSpan, method: string, route: string, status: number): void {
  if (route) request.span.updateName(`${method} ${route}`);
  request.end(
    { ...(route ? { "http.route": route } : {}), "http.response.status_code": status },
    status >= 500 ? String(status) : undefined,
  );
}

/** A Hono route pattern as an OpenTelemetry route template: `/mcp/:server` → `/mcp/{server}`. */
export function routeTemplate(pattern: string): string {
  return pattern.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");
}
