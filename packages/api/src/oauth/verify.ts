/**
 * Access-token verification on the resource server: the gateway's own ES256 JWTs (RFC 9068,
 * `typ: at+jwt`), each bound to exactly one resource (`aud`) — a token for `/mcp/a` is refused at
 * `/mcp/b` and at `/mcp`. `jose` checks the signature against a local JWK set (no network: the caller
 * passes the keys), the issuer, the audience and the expiry; the header's shape and the claims' shape
 * are checked here first, so each refusal keeps one short reason.
 */
import type { JsonWebKey } from "node:crypto";
import { z } from "@hono/zod-openapi";
import type { JSONWebKeySet, JWTVerifyGetKey } from "jose";

/** jose (what verify-jose.ts names), loaded by the first token verified. */
type Jose = typeof import("./verify-jose");
let joseModule: Promise<Jose> | undefined;
const loadJose = () => (joseModule ??= import("./verify-jose"));

/** The claims of a gateway access token. */
export const AccessTokenClaims = z.object({
  iss: z.string(),
  aud: z.union([z.string(), z.array(z.string())]),
  sub: z.string().min(1).max(256),
  client_id: z.string().min(1).max(2048),
  scope: z.string().max(1024),
  /** Server ids the user may use; null: every server. */
  servers: z.array(z.string().max(256)).max(1_000).nullable(),
  /** A grant per access mapping, when one names tool sets or a tool policy. */
  grants: z
    .array(
      z.object({
        serverIds: z.array(z.string().max(256)).max(1_000).nullable(),
        toolsets: z.array(z.string().max(64)).max(100),
        toolPolicy: z
          .object({
            allow: z.array(z.string().max(128)).max(500).optional(),
            refuse: z.record(z.string(), z.boolean()).optional(),
            except: z.array(z.string().max(128)).max(500).optional(),
          })
          .optional(),
      }),
    )
    .max(100)
    .optional(),
  jti: z.string().min(1).max(256),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

const Header = z.object({ alg: z.string(), typ: z.string().optional(), kid: z.string().optional() });

/** The one signing algorithm of gateway tokens. */
const ALGORITHM = "ES256";
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

const keySets = new WeakMap<object, JWTVerifyGetKey>();

/** The claims of `token` when it is a valid access token for `options.resource`; else AccessTokenError. */
export async function verifyAccessToken(token: string, options: VerifyOptions): Promise<AccessTokenClaims> {
  if (token.length > MAX_TOKEN_LENGTH) throw new AccessTokenError("token too long");
  if (token.split(".").length !== 3) throw new AccessTokenError("not a JWT");
  const jose = await loadJose();
  const header = Header.safeParse(decodedOr(jose.decodeProtectedHeader, token));
  if (!header.success) throw new AccessTokenError("malformed header");
  if (header.data.typ?.toLowerCase() !== "at+jwt") throw new AccessTokenError("not an access token");
  if (header.data.alg !== ALGORITHM) throw new AccessTokenError("unsupported algorithm");
  // jose would take the set's only key for a token naming none: a gateway token always names its key.
  if (header.data.kid === undefined) throw new AccessTokenError("unknown key");
  const now = options.now ?? Math.floor(Date.now() / 1000);
  let payload: unknown;
  try {
    ({ payload } = await jose.jwtVerify(token, keySetOf(jose, options.jwks), {
      algorithms: [ALGORITHM],
      issuer: options.issuer,
      audience: options.resource,
      clockTolerance: CLOCK_SKEW_SECONDS,
      currentDate: new Date(now * 1000),
    }));
  } catch (error) {
    throw refusalOf(jose, error, token);
  }
  const claims = AccessTokenClaims.safeParse(payload);
  if (!claims.success) throw new AccessTokenError("malformed claims");
  if (claims.data.iat > now + CLOCK_SKEW_SECONDS) throw new AccessTokenError("token issued in the future");
  return claims.data;
}

/** The local JWK set of `jwks`, made once per key set. */
function keySetOf({ createLocalJWKSet }: Jose, jwks: { keys: JsonWebKey[] }): JWTVerifyGetKey {
  let keySet = keySets.get(jwks);
  if (!keySet) {
    keySet = createLocalJWKSet(jwks as JSONWebKeySet);
    keySets.set(jwks, keySet);
  }
  return keySet;
}

/**
 * The refusal for what jose threw. A claim it refused comes after a good signature: claims of the
 * wrong shape are named as such first, as they were before jose checked the rest.
 */
function refusalOf({ errors, decodeJwt }: Jose, error: unknown, token: string): AccessTokenError {
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys ||
    error instanceof errors.JWKInvalid ||
    error instanceof errors.JOSENotSupported
  )
    return new AccessTokenError("unknown key");
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWSInvalid)
    return new AccessTokenError("bad signature");
  if (
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JWTClaimValidationFailed ||
    error instanceof errors.JWTExpired
  ) {
    if (!AccessTokenClaims.safeParse(decodedOr(decodeJwt, token)).success)
      return new AccessTokenError("malformed claims");
    if (error instanceof errors.JWTExpired) return new AccessTokenError("token expired");
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === "iss")
      return new AccessTokenError("wrong issuer");
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === "aud")
      return new AccessTokenError("token is for another resource");
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === "nbf")
      return new AccessTokenError("token not yet valid");
    return new AccessTokenError("malformed claims");
  }
  if (error instanceof errors.JOSEError) return new AccessTokenError("bad signature");
  throw error;
}

/** What `decode` makes of the token, or undefined where it cannot (jose throws on malformed input). */
function decodedOr<T>(decode: (token: string) => T, token: string): T | undefined {
  try {
    return decode(token);
  } catch {
    return undefined;
  }
}
