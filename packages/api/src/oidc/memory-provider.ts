/**
 * Test support (imported by unit tests only, never by runtime code): an OpenID provider in memory —
 * discovery, JWKS and a token endpoint behind a `fetch` — whose token endpoint answers the ID token a
 * test makes, so tests can send a wrong one without a network.
 */
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";

export const MEMORY_ISSUER = "https://op.example";
export const MEMORY_CLIENT_ID = "gateway-client";

/** What a test changes in the ID token (nothing: a good one). */
export interface IdTokenChange {
  claims?: JWTPayload;
  /** Signs with another key than the one the JWKS publishes. */
  foreignKey?: boolean;
  expired?: boolean;
  /** Changes `sub` after signing (the signature no longer matches). */
  tamper?: boolean;
  /** Sends back `nonce + "x"`. */
  wrongNonce?: boolean;
}

/** The provider: `fetch` for the client; `change` applies to the next token answers. */
export async function memoryProvider() {
  const keys = await generateKeyPair("RS256");
  const foreign = await generateKeyPair("RS256");
  const state = { change: {} as IdTokenChange, nonce: "" };

  async function idToken(nonce: string) {
    const { change } = state;
    const now = Math.floor(Date.now() / 1000);
    const signed = await new SignJWT({
      nonce: change.wrongNonce ? `${nonce}x` : nonce,
      groups: ["eng", "bad:name", "admins"],
      email: "ada@example.com",
      email_verified: true,
      ...change.claims,
    })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(typeof change.claims?.iss === "string" ? change.claims.iss : MEMORY_ISSUER)
      .setAudience(change.claims?.aud ?? MEMORY_CLIENT_ID)
      .setSubject(typeof change.claims?.sub === "string" ? change.claims.sub : "auth0|ada")
      .setIssuedAt(change.expired ? now - 7_200 : now)
      .setExpirationTime(change.expired ? now - 3_600 : now + 300)
      .sign((change.foreignKey ? foreign : keys).privateKey);
    if (!change.tamper) return signed;
    const [header, payload, signature] = signed.split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
    return `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: "root" })).toString("base64url")}.${signature}`;
  }

  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const json = (body: unknown) =>
      new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    if (url.pathname === "/.well-known/openid-configuration") {
      return json({
        issuer: MEMORY_ISSUER,
        authorization_endpoint: `${MEMORY_ISSUER}/auth`,
        token_endpoint: `${MEMORY_ISSUER}/token`,
        jwks_uri: `${MEMORY_ISSUER}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    }
    if (url.pathname === "/jwks") {
      return json({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "RS256", use: "sig" }] });
    }
    if (url.pathname === "/token" && init?.method === "POST") {
      return json({
        access_token: "at",
        token_type: "Bearer",
        expires_in: 60,
        id_token: await idToken(state.nonce),
      });
    }
    return new Response("not found", { status: 404 });
  }) as typeof fetch;

  return {
    fetch: fetchImpl,
    settings: {
      issuer: MEMORY_ISSUER,
      clientId: MEMORY_CLIENT_ID,
      clientSecret: "s3cret",
      groupsClaim: "groups",
      providerName: "Example",
      tokenAuthMethod: "client_secret_basic" as const,
    },
    /** The nonce the next token answer is for (the provider learns it from the authorization request). */
    expectNonce(nonce: string) {
      state.nonce = nonce;
    },
    /** How the next ID tokens are wrong. */
    change(change: IdTokenChange) {
      state.change = change;
    },
  };
}
