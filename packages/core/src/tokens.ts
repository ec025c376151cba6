import { createHash, timingSafeEqual } from "node:crypto";

/** Constant-time comparison of two secrets (hashing first makes the lengths equal). */
export function secretsEqual(given: string, expected: string): boolean {
  return secretMatcher(expected)(given);
}

/** {@link secretsEqual} against one secret, hashed once: for a check made on every request. */
export function secretMatcher(expected: string): (given: string) => boolean {
  const digest = createHash("sha256").update(expected).digest();
  return (given) => timingSafeEqual(createHash("sha256").update(given).digest(), digest);
}

/** The token of an `Authorization: Bearer <token>` header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}
