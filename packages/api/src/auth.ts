import { createHash, timingSafeEqual } from "node:crypto";
import { AppError } from "@mcpgw/core";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";

/** Constant-time comparison of two secrets (hashing first makes the lengths equal). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

/** Admin routes: `Authorization: Bearer <ADMIN_TOKEN>` or 401 problem+json. */
export function adminAuth(adminToken: string) {
  return createMiddleware<AppEnv>(async function adminAuth(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    if (!token || !secretsEqual(token, adminToken)) {
      throw new AppError("auth.unauthorized", "Missing or invalid bearer token.");
    }
    c.set("principal", { kind: "admin" });
    await next();
  });
}
