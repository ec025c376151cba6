/**
 * DNS-rebinding protection for what a browser could reach on a loopback listener: the MCP endpoints,
 * and `npm run dev`'s `/metrics`.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";
import { problemOf } from "./problem";

/** Who may talk to the MCP endpoints from a browser, and whether the gateway listens on loopback. */
export interface McpOriginPolicy {
  /** Origins allowed besides loopback ones (e.g. a hosted client's origin). */
  allowedOrigins?: string[];
  /** Listening on loopback: the Host header must name loopback too (DNS-rebinding protection). */
  loopbackOnly?: boolean;
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(:\d+)?$/i;

/**
 * DNS-rebinding protection from the MCP security guidance: a browser Origin must be loopback or
 * explicitly allowed, and on a loopback listener the Host header must be loopback too. Not the MCP
 * SDK's `validateOriginHeader`/`validateHostHeader`: they compare host names only (any scheme or port of
 * an allowed host passes) and know 127.0.0.1 but not the rest of 127.0.0.0/8.
 */
export function originGuard(policy: McpOriginPolicy) {
  const allowed = new Set(
    (policy.allowedOrigins ?? []).map((origin) => origin.replace(/\/$/, "").toLowerCase()),
  );
  return createMiddleware<AppEnv>(async function originGuard(c, next) {
    const origin = c.req.header("origin");
    if (origin && !allowed.has(origin.toLowerCase()) && !isLoopbackOrigin(origin)) {
      return problemOf(c, "auth.forbidden", `Origin '${origin}' is not allowed.`);
    }
    if (policy.loopbackOnly && !LOOPBACK_HOST.test(c.req.header("host") ?? "")) {
      return problemOf(c, "auth.forbidden", "Host header does not name this loopback listener.");
    }
    await next();
  });
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOST.test(url.host);
  } catch {
    return false;
  }
}
