/**
 * A test-only ES256 token signer (node:crypto P-256) and minting in the gateway's access-token format
 * (header `{alg: "ES256", typ: "at+jwt", kid}`, the contract's claims), until the authorization
 * server's own signer and `mintAccessToken` replace them.
 */
import { createHash, generateKeyPairSync, type JsonWebKey, randomUUID, sign } from "node:crypto";
import type { TokenSigner } from "../../packages/api/src/oauth/signer";

/** A signer with a fresh P-256 key; `kid` is the key's RFC 7638 thumbprint. */
export function createTestTokenSigner(): TokenSigner {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const kid = createHash("sha256")
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest("base64url");
  return {
    kid: async () => kid,
    sign: async (input) => sign("sha256", input, { key: privateKey, dsaEncoding: "ieee-p1363" }),
    publicJwks: async () => ({ keys: [{ ...jwk, kid, alg: "ES256", use: "sig" } as JsonWebKey] }),
  };
}

/** The claims of a test token: everything the contract names, any of them overridable. */
export interface TestClaims {
  iss: string;
  aud: string | string[];
  sub?: string;
  client_id?: string;
  scope?: string;
  servers?: string[] | null;
  jti?: string;
  iat?: number;
  exp?: number;
  [extra: string]: unknown;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A signed access token; `header` overrides (or, set undefined, drops) header fields. */
export async function mintTestToken(
  signer: TokenSigner,
  claims: TestClaims,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const body = {
    sub: "alice",
    client_id: "test-client",
    scope: "mcp",
    servers: null,
    jti: randomUUID(),
    iat: now,
    exp: now + 600,
    ...claims,
  };
  const head = { alg: "ES256", typ: "at+jwt", kid: await signer.kid(), ...header };
  const input = `${b64(head)}.${b64(body)}`;
  return `${input}.${(await signer.sign(Buffer.from(input))).toString("base64url")}`;
}
