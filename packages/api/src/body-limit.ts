import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/**
 * Hono's `bodyLimit`, without touching the body when the headers settle it: a GET or HEAD has none,
 * and a request whose `Content-Length` is within `maxSize` passes as it came — its body left for the
 * route to read (Node's adapter reads it straight from the socket then, with no web stream made for
 * it). Only a chunked body is counted as it streams, by Hono's own middleware.
 */
export function lazyBodyLimit(options: {
  maxSize: number;
  onError: (c: Context) => Response | Promise<Response>;
}): MiddlewareHandler {
  const counted = bodyLimit(options);
  return async function bodyLimitByHeaders(c, next) {
    const { method } = c.req;
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return counted(c, next);
    return Number.parseInt(length, 10) > options.maxSize ? options.onError(c) : next();
  };
}
