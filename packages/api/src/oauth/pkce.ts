/** PKCE (RFC 7636), S256 only. */
import { createHash, timingSafeEqual } from "node:crypto";

/** What a verifier or challenge may be: 43-128 unreserved characters. */
export const PKCE_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The S256 challenge of `verifier`. */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/** Whether `verifier` is well formed and its S256 challenge is `challenge` (compared in constant time). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!PKCE_PATTERN.test(verifier)) return false;
  const expected = Buffer.from(s256(verifier));
  const given = Buffer.from(challenge);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
