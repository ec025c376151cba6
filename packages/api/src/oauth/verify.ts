/**
 * Access-token verification on the resource server: the gateway's own ES256 JWTs (RFC 9068,
 * `typ: at+jwt`), each bound to exactly one resource (`aud`) — a token for `/mcp/a` is refused at
 * `/mcp/b` and at `/mcp`. No network: the caller passes the JWK set.
 */
import { createPublicKey, type JsonWebKey, type KeyObject, verify } from "node:crypto";
import { z } from "@hono/zod-openapi";

/** The claims of a gateway access token. */
export const AccessTokenClaims = z.object({
  iss: z.string(),
  aud: z.union([z.string(), z.array(z.string())]),
  sub: z.string().min(1).max(256),
  client_id: z.string().min(1).max(2048),
  scope: z.string().max(1024),
  /** Server ids the user may use; null: every server. */
  servers: z.array(z.string().max(256)).max(1_000).nullable(),
  jti: z.string().min(1).max(256),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

const Header = z.object({ alg: z.string(), typ: z.string().optional(), kid: z.string().optional() });

/** The longest token looked at: far more than a real one, small enough to bound the work. */
export const MAX_TOKEN_LENGTH = 8 * 1024;
/** Clock skew tolerated on `exp` and `iat`, in seconds. */
export const CLOCK_SKEW_SECONDS = 30;

/** A token that is not a valid access token here; `reason` is short, fixed text (safe for a header). */
export class AccessTokenError extends Error {
  override readonly name = "AccessTokenError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface VerifyOptions {
  /** The expected `iss`. */
  issuer: string;
  /** This request's resource: `aud` must be it (or an array holding it). */
  resource: string;
  /** The keys the token may be signed with, by `kid`. */
  jwks: { keys: JsonWebKey[] };
  /** The current time in seconds (default: now). */
  now?: number;
}

const keyObjects = new WeakMap<JsonWebKey, KeyObject>();

/** The claims of `token` when it is a valid access token for `options.resource`; else AccessTokenError. */
export function verifyAccessToken(token: string, options: VerifyOptions): AccessTokenClaims {
  if (token.length > MAX_TOKEN_LENGTH) throw new AccessTokenError("token too long");
  const parts = token.split(".");
  if (parts.length !== 3) throw new AccessTokenError("not a JWT");
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = Header.safeParse(decodeJson(headerPart));
  if (!header.success) throw new AccessTokenError("malformed header");
  if (header.data.typ?.toLowerCase() !== "at+jwt") throw new AccessTokenError("not an access token");
  if (header.data.alg !== "ES256") throw new AccessTokenError("unsupported algorithm");
  const jwk = options.jwks.keys.find((key) => (key as { kid?: unknown }).kid === header.data.kid);
  if (header.data.kid === undefined || !jwk) throw new AccessTokenError("unknown key");
  const signature = decodeBase64Url(signaturePart);
  const signed = Buffer.from(`${headerPart}.${payloadPart}`);
  if (
    signature?.length !== 64 ||
    !verify("sha256", signed, { key: keyOf(jwk), dsaEncoding: "ieee-p1363" }, signature)
  )
    throw new AccessTokenError("bad signature");
  const claims = AccessTokenClaims.safeParse(decodeJson(payloadPart));
  if (!claims.success) throw new AccessTokenError("malformed claims");
  const { iss, aud, iat, exp } = claims.data;
  if (iss !== options.issuer) throw new AccessTokenError("wrong issuer");
  if (!(Array.isArray(aud) ? aud.includes(options.resource) : aud === options.resource))
    throw new AccessTokenError("token is for another resource");
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (exp <= now - CLOCK_SKEW_SECONDS) throw new AccessTokenError("token expired");
  if (iat > now + CLOCK_SKEW_SECONDS) throw new AccessTokenError("token issued in the future");
  return claims.data;
}

function keyOf(jwk: JsonWebKey): KeyObject {
  let key = keyObjects.get(jwk);
  if (!key) {
    if (jwk.kty !== "EC" || jwk.crv !== "P-256") throw new AccessTokenError("unknown key");
    try {
      key = createPublicKey({
        key: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y } as JsonWebKey,
        format: "jwk",
      });
    } catch {
      throw new AccessTokenError("unknown key");
    }
    keyObjects.set(jwk, key);
  }
  return key;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function decodeBase64Url(part: string): Buffer | undefined {
  return BASE64URL.test(part) ? Buffer.from(part, "base64url") : undefined;
}

function decodeJson(part: string): unknown {
  const bytes = decodeBase64Url(part);
  if (!bytes) return undefined;
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
}
