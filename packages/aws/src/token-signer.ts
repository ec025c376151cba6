/**
 * ES256 signing of the gateway's access tokens. Deployed and in `npm run dev` the private key is an
 * asymmetric KMS key (ECC_NIST_P256, SIGN_VERIFY) that never leaves KMS; only its public half is
 * published (the JWKS). Unit tests use a node:crypto key of their own.
 */
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
  sign,
} from "node:crypto";
import { GetPublicKeyCommand, type KMSClient, SignCommand } from "@aws-sdk/client-kms";

/** What mints access tokens needs of a key: its id, an ES256 signature, the public JWKS. */
export interface TokenSigner {
  /** The key id in the JWT header: the RFC 7638 thumbprint of the public key. */
  kid(): Promise<string>;
  /** An ES256 signature of `signingInput` (`<header>.<payload>`), as JOSE r||s (64 bytes). */
  sign(signingInput: Buffer): Promise<Buffer>;
  /** The public key(s) resource servers verify with. */
  publicJwks(): Promise<{ keys: JsonWebKey[] }>;
}

/** Signing failed (KMS refused or is unreachable); no token was issued. */
export class SigningError extends Error {
  override readonly name = "SigningError";
}

/** The RFC 7638 thumbprint of an EC public JWK (members crv, kty, x, y in that order). */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash("sha256").update(canonical).digest("base64url");
}

/** A public key as a JWK for ES256, with its thumbprint as `kid`. */
function publicJwk(key: KeyObject): JsonWebKey & { kid: string } {
  const { kty, crv, x, y } = key.export({ format: "jwk" });
  const jwk = { kty, crv, x, y };
  return { ...jwk, kid: jwkThumbprint(jwk), use: "sig", alg: "ES256" } as JsonWebKey & { kid: string };
}

/**
 * A DER ECDSA signature (`SEQUENCE { INTEGER r, INTEGER s }`, what KMS returns) as JOSE r||s, each
 * `size` bytes (RFC 7518 §3.4).
 */
export function derToJose(der: Uint8Array, size = 32): Buffer {
  if (der[0] !== 0x30) throw new Error("not a DER sequence");
  const lengthByte = der[1] ?? 0;
  let i = lengthByte & 0x80 ? 2 + (lengthByte & 0x7f) : 2;
  const integer = () => {
    if (der[i++] !== 0x02) throw new Error("not a DER integer");
    const length = der[i++] ?? 0;
    let value = der.subarray(i, i + length);
    i += length;
    if (value.length !== length) throw new Error("truncated DER integer");
    // Drop the sign padding (a leading 0x00 when the top bit is set).
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error("DER integer too long");
    const out = Buffer.alloc(size);
    out.set(value, size - value.length);
    return out;
  };
  return Buffer.concat([integer(), integer()]);
}

/**
 * A signer over the KMS key `keyId` (ECC_NIST_P256, SIGN_VERIFY): `Sign` with ECDSA_SHA_256 on the
 * RAW message, its DER signature turned into JOSE. The public key is read once (GetPublicKey) and
 * kept for the life of the process.
 */
export function createKmsTokenSigner(kms: KMSClient, keyId: string): TokenSigner {
  let publicKey: Promise<JsonWebKey & { kid: string }> | undefined;
  const load = () => {
    publicKey ??= kms
      .send(new GetPublicKeyCommand({ KeyId: keyId }))
      .then(({ PublicKey }) => {
        if (!PublicKey) throw new SigningError("KMS returned no public key");
        return publicJwk(createPublicKey({ key: Buffer.from(PublicKey), format: "der", type: "spki" }));
      })
      .catch((cause) => {
        publicKey = undefined;
        throw cause instanceof SigningError
          ? cause
          : new SigningError(`Could not read the signing key's public key (${nameOf(cause)})`, { cause });
      });
    return publicKey;
  };
  return {
    kid: async () => (await load()).kid,
    async sign(signingInput) {
      // RAW, never DIGEST: KMS hashes the message itself (and the emulator ignores DIGEST).
      if (signingInput.length > 4096) throw new SigningError("A RAW KMS message is at most 4096 bytes");
      try {
        const { Signature } = await kms.send(
          new SignCommand({
            KeyId: keyId,
            Message: signingInput,
            MessageType: "RAW",
            SigningAlgorithm: "ECDSA_SHA_256",
          }),
        );
        if (!Signature) throw new SigningError("KMS returned no signature");
        return derToJose(Signature);
      } catch (cause) {
        if (cause instanceof SigningError) throw cause;
        throw new SigningError(`Could not sign with KMS (${nameOf(cause)})`, { cause });
      }
    },
    publicJwks: async () => ({ keys: [await load()] }),
  };
}

/** A signer over a fresh in-process P-256 key (unit tests; nothing to reach). */
export function createLocalTokenSigner(): TokenSigner {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicJwk(publicKey);
  return {
    kid: async () => jwk.kid,
    sign: async (signingInput) =>
      sign("sha256", signingInput, { key: privateKey, dsaEncoding: "ieee-p1363" }),
    publicJwks: async () => ({ keys: [jwk] }),
  };
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}
