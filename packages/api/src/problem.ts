import { type OutageLog, storeUnavailable } from "@mcpgw/aws";
import { AppError, type ErrorCode, errorFields, problemResponse } from "@mcpgw/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./env";

export { problemBody } from "@mcpgw/core";

/** Renders an AppError as an `application/problem+json` response (the one renderer, in core). */
export function problem(c: Context, error: AppError): Response {
  return problemResponse(error, c.req.path);
}

/** Shortcut: a problem response for `code`. */
export function problemOf(
  c: Context,
  code: ErrorCode,
  detail: string,
  extra?: Record<string, unknown>,
): Response {
  return problem(c, new AppError(code, detail, extra));
}

/** 415 for a body a JSON route cannot take: what it was sent as, and what to send. */
function unsupportedMediaType(c: Context): Response {
  const sent = c.req.header("content-type");
  const said = sent ? `was sent as ${JSON.stringify(sent.slice(0, 100))}` : "came without a Content-Type";
  return problemOf(
    c,
    "request.unsupported_media_type",
    `The request body ${said}: send it as JSON with Content-Type: application/json.`,
  );
}

/**
 * The one error handler: AppErrors as they are, HTTP errors mapped to codes, the store unavailable
 * 503 `store.unavailable` (see `storeUnavailable`), anything else a bare 500.
 * A missing AWS resource is logged through `outages` (one line per interval, not one per request).
 */
export function onError(error: Error, c: Context<AppEnv>, outages?: OutageLog): Response {
  if (error instanceof AppError) return problem(c, error);
  if (error instanceof HTTPException) {
    if (error.status === 400 && /malformed json/i.test(error.message)) {
      return problemOf(c, "request.malformed_json", "The request body is not valid JSON.");
    }
    if (error.status === 413) return problemOf(c, "request.too_large", "The request body exceeds 1 MiB.");
    if (error.status === 415) return unsupportedMediaType(c);
    if (error.status === 401) return problemOf(c, "auth.unauthorized", "Missing or invalid bearer token.");
    if (error.status < 500) return problemOf(c, "request.invalid", error.message);
  }
  const logger = c.get("logger");
  if (logger && outages?.report(logger, error)) logger.debug("request failed", errorFields(error));
  else logger?.error("request failed", errorFields(error));
  // The store could not be used just now (down, throttled, a write not made): 503, try again.
  const unavailable = storeUnavailable(error, { requestId: c.get("requestId") });
  if (unavailable) return problem(c, unavailable);
  return problemOf(c, "internal", "An internal error occurred; see the logs with this request id.", {
    requestId: c.get("requestId"),
  });
}
