import type { ApiKeyInfo, ApiKeyStore } from "@mcpgw/aws";
import { AppError, bearerToken, secretsEqual } from "@mcpgw/core";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";

/** How long a key lookup (hit or miss) is cached: the bound on how late a revocation takes effect. */
export const KEY_CACHE_MS = 2_000;

/** Routes only the admin token may use; client keys get 403 there. */
const ADMIN_ONLY = /^\/v1\/(servers|secrets|keys|threads)(\/|$)/;

/** Looks keys up in the store, remembering answers for KEY_CACHE_MS. */
export function cachedKeyVerifier(
  keys: Pick<ApiKeyStore, "verify">,
): (key: string) => Promise<ApiKeyInfo | undefined> {
  const cache = new Map<string, { at: number; info: Promise<ApiKeyInfo | undefined> }>();
  return (key) => {
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < KEY_CACHE_MS) return hit.info;
    if (cache.size > 10_000) cache.clear();
    const info = keys.verify(key);
    cache.set(key, { at: Date.now(), info });
    info.catch(() => cache.delete(key));
    return info;
  };
}

/**
 * Who is calling: the admin token (everything) or a client API key (the data plane and MCP endpoints
 * only — 403 on admin routes). Anything else is 401.
 */
export function authenticate(options: {
  adminToken: string;
  verifyKey: (key: string) => Promise<ApiKeyInfo | undefined>;
}) {
  return createMiddleware<AppEnv>(async function authenticate(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    if (token && secretsEqual(token, options.adminToken)) {
      c.set("principal", { kind: "admin" });
      return next();
    }
    const key = token ? await options.verifyKey(token) : undefined;
    if (!key) throw new AppError("auth.unauthorized", "Missing or invalid bearer token.");
    if (ADMIN_ONLY.test(c.req.path))
      throw new AppError("auth.forbidden", "Client API keys cannot use admin routes.");
    c.set("principal", { kind: "key", keyId: key.id, serverIds: key.serverIds });
    await next();
  });
}
