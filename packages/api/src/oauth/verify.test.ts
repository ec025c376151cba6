import { createHmac, createPublicKey, type JsonWebKey } from "node:crypto";
import { createLocalTokenSigner } from "@mcpgw/aws";
import { beforeAll, describe, expect, it } from "vitest";
import { mintTestToken, type TestClaims } from "../../../../tests/support/oauth";
import type { TokenSigner } from "./signer";
import { AccessTokenError, MAX_TOKEN_LENGTH, verifyAccessToken } from "./verify";

const ISS = "https://gw.example.com";
const RESOURCE = `${ISS}/mcp/alpha`;

describe("verifyAccessToken", () => {
  let signer: TokenSigner;
  let jwks: { keys: JsonWebKey[] };
  const mint = (claims: Partial<TestClaims> = {}, header: Record<string, unknown> = {}) =>
    mintTestToken(signer, { iss: ISS, aud: RESOURCE, servers: ["s1"], ...claims }, header);
  const check = (token: string, now?: number) =>
    verifyAccessToken(token, { issuer: ISS, resource: RESOURCE, jwks, ...(now ? { now } : {}) });
  /** The reason `token` is refused. */
  const refusal = async (token: string, now?: number) => {
    try {
      await check(token, now);
    } catch (error) {
      if (error instanceof AccessTokenError) return error.reason;
      throw error;
    }
    throw new Error("accepted");
  };
  const parts = (token: string) => token.split(".") as [string, string, string];
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));

  beforeAll(async () => {
    signer = createLocalTokenSigner();
    jwks = await signer.publicJwks();
  });

  it("accepts a valid token and returns its claims", async () => {
    const claims = await check(await mint({ sub: "bob" }));
    expect(claims).toMatchObject({ iss: ISS, aud: RESOURCE, sub: "bob", scope: "mcp", servers: ["s1"] });
  });

  it("accepts an aud array holding the resource, and 30 s of clock skew", async () => {
    expect((await check(await mint({ aud: ["x", RESOURCE] }))).sub).toBe("alice");
    const now = Math.floor(Date.now() / 1000);
    expect((await check(await mint({ iat: now - 700, exp: now - 20 }), now)).sub).toBe("alice");
    expect((await check(await mint({ iat: now + 20 }), now)).sub).toBe("alice");
  });

  it("refuses a tampered payload", async () => {
    const [h, p, s] = parts(await mint());
    const claims = decode(p);
    expect(await refusal(`${h}.${encode({ ...claims, servers: null })}.${s}`)).toBe("bad signature");
  });

  it("refuses a tampered signature", async () => {
    const [h, p, s] = parts(await mint());
    const bytes = Buffer.from(s, "base64url");
    bytes[10] = (bytes[10] ?? 0) ^ 1;
    expect(await refusal(`${h}.${p}.${bytes.toString("base64url")}`)).toBe("bad signature");
    expect(await refusal(`${h}.${p}.${s.slice(0, -4)}`)).toBe("bad signature");
  });

  it("refuses a token signed by another key under the same kid", async () => {
    const other = createLocalTokenSigner();
    expect(
      await refusal(await mintTestToken(other, { iss: ISS, aud: RESOURCE }, { kid: await signer.kid() })),
    ).toBe("bad signature");
  });

  it("refuses the wrong issuer", async () => {
    expect(await refusal(await mint({ iss: "https://evil.example.com" }))).toBe("wrong issuer");
    expect(await refusal(await mint({ iss: `${ISS}/` }))).toBe("wrong issuer");
  });

  it("refuses a token for another resource (exact match only)", async () => {
    expect(await refusal(await mint({ aud: `${ISS}/mcp/beta` }))).toBe("token is for another resource");
    expect(await refusal(await mint({ aud: `${ISS}/mcp` }))).toBe("token is for another resource");
    expect(await refusal(await mint({ aud: `${RESOURCE}/` }))).toBe("token is for another resource");
    expect(await refusal(await mint({ aud: [] }))).toBe("token is for another resource");
  });

  it("refuses an expired token and one issued in the future", async () => {
    // Each judged at the `now` its claims were made from: a second boundary between them once failed it.
    const now = Math.floor(Date.now() / 1000);
    expect(await refusal(await mint({ iat: now - 700, exp: now - 31 }), now)).toBe("token expired");
    expect(await refusal(await mint({ iat: now, exp: now + 600 }), now + 631)).toBe("token expired");
    expect(await refusal(await mint({ iat: now + 31, exp: now + 600 }), now)).toBe(
      "token issued in the future",
    );
  });

  it("refuses alg none", async () => {
    const [, p] = parts(await mint());
    const header = encode({ alg: "none", typ: "at+jwt", kid: await signer.kid() });
    expect(await refusal(`${header}.${p}.`)).toBe("unsupported algorithm");
  });

  it("refuses HS256 signed with the public key as the secret", async () => {
    const [, p] = parts(await mint());
    const header = encode({ alg: "HS256", typ: "at+jwt", kid: await signer.kid() });
    const pem = createPublicKey({ key: jwks.keys[0] as JsonWebKey, format: "jwk" })
      .export({ type: "spki", format: "pem" })
      .toString();
    const mac = createHmac("sha256", pem).update(`${header}.${p}`).digest("base64url");
    expect(await refusal(`${header}.${p}.${mac}`)).toBe("unsupported algorithm");
    expect(await refusal(await mint({}, { alg: "RS256" }))).toBe("unsupported algorithm");
  });

  it("refuses an unknown or missing kid", async () => {
    expect(await refusal(await mint({}, { kid: "someone-else" }))).toBe("unknown key");
    expect(await refusal(await mint({}, { kid: undefined }))).toBe("unknown key");
  });

  it("refuses a kid naming a key of another type, even when it is the set's only key", async () => {
    const rsa = { kty: "RSA", kid: "rsa-1", n: "sXch", e: "AQAB" } as JsonWebKey;
    const token = await mint({}, { kid: "rsa-1" });
    await expect(
      verifyAccessToken(token, { issuer: ISS, resource: RESOURCE, jwks: { keys: [rsa] } }),
    ).rejects.toMatchObject({ reason: "unknown key" });
  });

  it("refuses a token not valid before a later time (nbf)", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await refusal(await mint({ nbf: now + 120 } as Partial<TestClaims>))).toBe("token not yet valid");
    expect((await check(await mint({ nbf: now + 20 } as Partial<TestClaims>))).sub).toBe("alice");
  });

  it("names claims of the wrong shape before a wrong issuer, audience or expiry", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await mint({ iss: "https://evil.example.com", aud: "x", exp: now - 100, sub: "" });
    expect(await refusal(token)).toBe("malformed claims");
    expect(await refusal(await mint({ iss: "https://evil.example.com", exp: now - 100 }))).toBe(
      "wrong issuer",
    );
    expect(await refusal(await mint({ aud: "x", exp: now - 100 }))).toBe("token is for another resource");
  });

  it("refuses a typ other than at+jwt", async () => {
    expect(await refusal(await mint({}, { typ: "JWT" }))).toBe("not an access token");
    expect(await refusal(await mint({}, { typ: undefined }))).toBe("not an access token");
  });

  it("refuses claims of the wrong shape", async () => {
    expect(await refusal(await mint({ sub: "" }))).toBe("malformed claims");
    expect(await refusal(await mint({ servers: "all" as never }))).toBe("malformed claims");
    expect(await refusal(await mint({ exp: "soon" as never }))).toBe("malformed claims");
  });

  it("refuses garbage and oversized input", async () => {
    expect(await refusal("")).toBe("not a JWT");
    expect(await refusal("mgw_abc")).toBe("not a JWT");
    expect(await refusal("a.b")).toBe("not a JWT");
    expect(await refusal("a.b.c.d")).toBe("not a JWT");
    expect(await refusal("!!.??.**")).toBe("malformed header");
    expect(await refusal(`${encode("x")}.e30.`)).toBe("malformed header");
    expect(await refusal("x".repeat(MAX_TOKEN_LENGTH + 1))).toBe("token too long");
  });
});
