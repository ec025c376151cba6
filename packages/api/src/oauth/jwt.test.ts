import { createPublicKey, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ACCESS_TOKEN_TTL_SECONDS, mintAccessToken } from "./jwt";
import { createLocalTokenSigner } from "./signer";

const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));

describe("mintAccessToken", () => {
  it("signs an at+jwt ES256 token under the signer's kid that its JWKS verifies, living 10 minutes", async () => {
    const signer = createLocalTokenSigner();
    const token = await mintAccessToken(signer, {
      iss: "https://gw.test",
      aud: "https://gw.test/mcp/docs",
      sub: "ada",
      client_id: "c1",
      scope: "mcp",
      servers: ["s1"],
    });

    const [header = "", payload = "", signature = ""] = token.split(".");
    const claims = decode(payload);
    expect(decode(header)).toEqual({ alg: "ES256", typ: "at+jwt", kid: await signer.kid() });
    expect(claims).toMatchObject({
      iss: "https://gw.test",
      aud: "https://gw.test/mcp/docs",
      servers: ["s1"],
    });
    expect(claims.exp - claims.iat).toBe(ACCESS_TOKEN_TTL_SECONDS);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    const [jwk] = (await signer.publicJwks()).keys;
    const key = createPublicKey({ key: jwk ?? {}, format: "jwk" });
    const input = Buffer.from(`${header}.${payload}`);
    expect(
      verify("sha256", input, { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url")),
    ).toBe(true);
  });
});
