/**
 * What verify.ts uses of jose, which it imports on demand (`import()` of this module): a deployment
 * without OAuth, or a cold start before the first bearer token, loads none of it. jose by module (its
 * subpath exports), not its index: the chunk holds only these.
 */
export { decodeProtectedHeader } from "jose/decode/protected_header";
export * as errors from "jose/errors";
export { createLocalJWKSet } from "jose/jwks/local";
export { decodeJwt } from "jose/jwt/decode";
export { jwtVerify } from "jose/jwt/verify";
