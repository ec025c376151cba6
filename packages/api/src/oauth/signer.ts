/**
 * What signs the gateway's access tokens (ES256). The authorization server owns the implementations
 * (KMS in production, node:crypto for tests); the resource server only needs `publicJwks`.
 */
import type { JsonWebKey } from "node:crypto";

export interface TokenSigner {
  /** The key id the tokens' header names (`kid`). */
  kid(): Promise<string>;
  /** The ES256 signature of `signingInput` as JOSE wants it: r‖s, 64 bytes. */
  sign(signingInput: Buffer): Promise<Buffer>;
  /** The public keys tokens are verified with, as a JWK set. */
  publicJwks(): Promise<{ keys: JsonWebKey[] }>;
}
