import type { AppError } from "./errors";

/** The problem+json (RFC 9457) body of an error: its table row, detail, code and extra fields. */
export function problemBody(error: AppError, instance?: string): Record<string, unknown> {
  return {
    type: `https://mcp-gateway.dev/problems/${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(instance ? { instance } : {}),
    ...error.extra,
  };
}

/**
 * An AppError as an `application/problem+json` response — the one renderer of the API and the runner:
 * 401 says how to authenticate, 503 and one with `retryAfter` (seconds) when to try again.
 */
export function problemResponse(error: AppError, instance?: string): Response {
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (error.code === "auth.unauthorized") headers["www-authenticate"] = 'Bearer realm="mcp-gateway"';
  if (error.status === 503) headers["retry-after"] = "1";
  if (typeof error.extra.retryAfter === "number") headers["retry-after"] = String(error.extra.retryAfter);
  return new Response(JSON.stringify(problemBody(error, instance)), { status: error.status, headers });
}
