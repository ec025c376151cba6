import type { OutageLog } from "@mcpgw/aws";
import { AppError, type ErrorCode, errorFields } from "@mcpgw/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./env";

/** The problem+json body of an error. */
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

/** Renders an AppError as an `application/problem+json` response. */
export function problem(c: Context, error: AppError): Response {
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (error.code === "auth.unauthorized") headers["www-authenticate"] = 'Bearer realm="mcp-gateway"';
  if (error.status === 503) headers["retry-after"] = "1";
  return new Response(JSON.stringify(problemBody(error, c.req.path)), { status: error.status, headers });
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

/**
 * The one error handler: AppErrors as they are, HTTP errors mapped to codes, anything else a bare 500.
 * A missing AWS resource is logged through `outages` (one line per interval, not one per request).
 */
export function onError(error: Error, c: Context<AppEnv>, outages?: OutageLog): Response {
  if (error instanceof AppError) return problem(c, error);
  if (error instanceof HTTPException) {
    if (error.status === 400 && /malformed json/i.test(error.message)) {
      return problemOf(c, "request.malformed_json", "The request body is not valid JSON.");
    }
    if (error.status === 413) return problemOf(c, "request.too_large", "The request body exceeds 1 MiB.");
    if (error.status === 401) return problemOf(c, "auth.unauthorized", "Missing or invalid bearer token.");
    if (error.status < 500) return problemOf(c, "request.invalid", error.message);
  }
  const logger = c.get("logger");
  if (logger && outages?.report(logger, error)) logger.debug("request failed", errorFields(error));
  else logger?.error("request failed", errorFields(error));
  if (error.name === "StoreError") {
    // Nothing was written: the caller may simply try again.
    return problemOf(c, "store.unavailable", `${error.message}. Try again.`, {
      requestId: c.get("requestId"),
    });
  }
  return problemOf(c, "internal", "An internal error occurred; see the logs with this request id.", {
    requestId: c.get("requestId"),
  });
}
