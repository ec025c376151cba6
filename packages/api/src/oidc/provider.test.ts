import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { newLoginBinding } from "./binding";
import { identityOf, isConsoleAdmin, OidcClient, SignInError } from "./provider";

const ISSUER = "https://op.example";
const CLIENT_ID = "gateway-client";
const REDIRECT = "https://gw.example/oauth/oidc/callback";

type Keys = Awaited<ReturnType<typeof generateKeyPair>>;
let keys: Keys;
let otherKeys: Keys;

/**
 * An OpenID provider in memory (discovery, JWKS, token endpoint): its token endpoint answers the ID
 * token `idToken` makes, so a test can send a wrong one.
 */
function provider(idToken: (nonce: string) => Promise<string>, nonceOf: () => string) {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const json = (body: unknown) =>
      new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
    if (url.pathname === "/.well-known/openid-configuration") {
      return json({
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/auth`,
        token_endpoint: `${ISSUER}/token`,
        jwks_uri: `${ISSUER}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    }
    if (url.pathname === "/jwks")
      return json({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "RS256", use: "sig" }] });
    if (url.pathname === "/token" && init?.method === "POST") {
      return json({
        access_token: "at",
        token_type: "Bearer",
        expires_in: 60,
        id_token: await idToken(nonceOf()),
      });
    }
    return new Response("not found", { status: 404 });
  }) as typeof fetch;
}

/** An ID token: good unless `change` says otherwise. */
async function mint(nonce: string, change: { claims?: JWTPayload; key?: Keys; expired?: boolean } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    nonce,
    groups: ["eng", "bad:name", "admins"],
    email: "ada@example.com",
    email_verified: true,
    ...change.claims,
  })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(typeof change.claims?.iss === "string" ? change.claims.iss : ISSUER)
    .setAudience(change.claims?.aud ?? CLIENT_ID)
    .setSubject("auth0|ada")
    .setIssuedAt(change.expired ? now - 7_200 : now)
    .setExpirationTime(change.expired ? now - 3_600 : now + 300)
    .sign((change.key ?? keys).privateKey);
}

/** Signs in through the in-memory provider with the ID token `idToken` makes. */
async function signIn(
  idToken: (nonce: string) => Promise<string>,
  answer?: (state: string) => URLSearchParams,
) {
  const binding = newLoginBinding(600);
  const client = new OidcClient(
    {
      issuer: ISSUER,
      clientId: CLIENT_ID,
      clientSecret: "s3cret",
      groupsClaim: "groups",
      providerName: "Example",
    },
    provider(idToken, () => binding.nonce),
  );
  const url = await client.authorizationUrl(REDIRECT, binding);
  const params = answer ? answer(binding.state) : new URLSearchParams({ code: "c0de", state: binding.state });
  return { url, result: client.signIn(REDIRECT, params, binding) };
}

async function refusal(result: Promise<unknown>): Promise<SignInError> {
  const error = await result.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(SignInError);
  return error as SignInError;
}

beforeAll(async () => {
  keys = await generateKeyPair("RS256");
  otherKeys = await generateKeyPair("RS256");
});

describe("signing in at the OpenID provider", () => {
  it("asks for code + PKCE S256 + state + nonce with openid email profile, and reads sub and groups", async () => {
    const { url, result } = await signIn((nonce) => mint(nonce));

    expect(url.origin + url.pathname).toBe(`${ISSUER}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      scope: "openid email profile",
      code_challenge_method: "S256",
    });
    for (const name of ["state", "nonce", "code_challenge"])
      expect(url.searchParams.get(name)).toMatch(/^[\w-]{43}$/);
    expect(await result).toEqual({
      sub: "auth0|ada",
      groups: ["admins", "eng"],
      email: "ada@example.com",
      label: "ada@example.com",
    });
  });

  it.each([
    ["a wrong nonce", (nonce: string) => mint(`${nonce}x`), /nonce/],
    ["another issuer", (nonce: string) => mint(nonce, { claims: { iss: "https://evil.example" } }), /iss/],
    ["another audience", (nonce: string) => mint(nonce, { claims: { aud: "someone-else" } }), /aud/],
    ["an expired token", (nonce: string) => mint(nonce, { expired: true }), /exp|timestamp/],
    [
      "a key not in the provider's JWKS",
      (nonce: string) => mint(nonce, { key: otherKeys }),
      /signature|key/i,
    ],
    [
      "a tampered payload",
      async (nonce: string) => {
        const [header, payload, signature] = (await mint(nonce)).split(".");
        const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
        const forged = Buffer.from(JSON.stringify({ ...claims, sub: "root" })).toString("base64url");
        return `${header}.${forged}.${signature}`;
      },
      /signature/i,
    ],
  ])("refuses %s (400, saying what failed)", async (_name, idToken, detail) => {
    const error = await refusal((await signIn(idToken)).result);

    expect(error.status).toBe(400);
    expect(error.refused).toBe(false);
    expect(error.message).toMatch(/could not be verified/);
    expect(error.message).toMatch(detail);
  });

  it("refuses an answer whose state is not the sign-in's", async () => {
    const { result } = await signIn(mint, () => new URLSearchParams({ code: "c0de", state: "forged" }));
    expect((await refusal(result)).message).toMatch(/state/);
  });

  it("reports the provider's refusal (the person cancelled) as such", async () => {
    const { result } = await signIn(mint, (state) => new URLSearchParams({ error: "access_denied", state }));
    const error = await refusal(result);
    expect(error.refused).toBe(true);
    expect(error.message).toContain("access_denied");
  });
});

describe("the identity in the claims", () => {
  it("takes groups from the configured claim (a list or a string), dropping unusable names", () => {
    const cognito = identityOf(
      { sub: "0b1c5a7e-7f1e", "cognito:groups": ["ops", "eng", "ops"] },
      "cognito:groups",
    );
    const spaced = identityOf({ sub: "u1", groups: "eng ops", email: "u1@example.com" }, "groups");
    const none = identityOf({ sub: "u2", name: "Ada L." }, "groups");

    expect(cognito).toMatchObject({ groups: ["eng", "ops"], label: "0b1c5a7e-7f1e" });
    expect(spaced).toMatchObject({ groups: ["eng", "ops"], email: undefined, label: "u1" });
    expect(none).toMatchObject({ groups: [], label: "Ada L." });
    expect(() => identityOf({ sub: "user:root" }, "groups")).toThrow(SignInError);
  });

  it("makes console admins of the admin group's members and of listed subs or verified emails", () => {
    const admins = { group: "gw-admins", users: ["u-7", "Boss@Example.com"] };
    const who = (sub: string, groups: string[], email?: string) => ({ sub, groups, email, label: sub });

    expect(isConsoleAdmin(who("u1", ["gw-admins"]), admins)).toBe(true);
    expect(isConsoleAdmin(who("u-7", []), admins)).toBe(true);
    expect(isConsoleAdmin(who("u2", [], "boss@example.com"), admins)).toBe(true);
    expect(isConsoleAdmin(who("u3", ["eng"], "someone@example.com"), admins)).toBe(false);
    expect(isConsoleAdmin(who("u1", ["gw-admins"]), { group: undefined, users: [] })).toBe(false);
  });
});
