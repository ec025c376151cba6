import { createPublicKey, generateKeyPairSync, type JsonWebKey, sign, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLocalTokenSigner, derToJose, jwkThumbprint } from "./token-signer";

describe("derToJose", () => {
  it("turns node's DER ECDSA signatures into the r||s node verifies as ieee-p1363, over many keys", () => {
    for (let i = 0; i < 40; i++) {
      const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const message = Buffer.from(`message ${i}`);
      const der = sign("sha256", message, { key: privateKey, dsaEncoding: "der" });

      const jose = derToJose(der);

      expect(jose).toHaveLength(64);
      expect(verify("sha256", message, { key: publicKey, dsaEncoding: "ieee-p1363" }, jose)).toBe(true);
    }
  });

  it("pads short integers and drops sign padding", () => {
    // r = 0x01 (one byte), s = 0x00 0x80 followed by 31 bytes (sign-padded, 33 bytes)
    const s = Buffer.concat([Buffer.from([0x00, 0x80]), Buffer.alloc(31, 1)]);
    const der = Buffer.concat([Buffer.from([0x30, 3 + 2 + s.length, 0x02, 1, 0x01, 0x02, s.length]), s]);

    const jose = derToJose(der);

    expect(jose.subarray(0, 32)).toEqual(Buffer.concat([Buffer.alloc(31), Buffer.from([1])]));
    expect(jose.subarray(32)).toEqual(s.subarray(1));
  });

  it("refuses what is not a DER signature", () => {
    expect(() => derToJose(Buffer.from([0x31, 0]))).toThrow(/DER sequence/);
    expect(() => derToJose(Buffer.from([0x30, 2, 0x05, 0]))).toThrow(/DER integer/);
  });
});

describe("createLocalTokenSigner", () => {
  it("signs what its published JWK verifies, under the key's RFC 7638 thumbprint", async () => {
    const signer = createLocalTokenSigner();
    const input = Buffer.from("header.payload");

    const signature = await signer.sign(input);
    const { keys } = await signer.publicJwks();

    expect(keys).toHaveLength(1);
    const jwk = keys[0] as JsonWebKey & { kid: string };
    expect(jwk).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: await signer.kid() });
    expect(jwk).not.toHaveProperty("d");
    expect(jwk.kid).toBe(jwkThumbprint(jwk));
    const key = createPublicKey({ key: jwk, format: "jwk" });
    expect(verify("sha256", input, { key, dsaEncoding: "ieee-p1363" }, signature)).toBe(true);
    expect(verify("sha256", Buffer.from("other"), { key, dsaEncoding: "ieee-p1363" }, signature)).toBe(false);
  });

  it("computes the thumbprint of RFC 7638's own example shape (members in order, no others)", () => {
    const a = jwkThumbprint({ kty: "EC", crv: "P-256", x: "x1", y: "y1" });
    const b = jwkThumbprint({ y: "y1", x: "x1", crv: "P-256", kty: "EC", alg: "ES256" } as JsonWebKey);
    expect(a).toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
