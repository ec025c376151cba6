import { beforeAll, describe, expect, it } from "vitest";
import { newLoginBinding } from "./binding";
import { type IdTokenChange, MEMORY_CLIENT_ID, MEMORY_ISSUER, memoryProvider } from "./memory-provider";
import { consoleAdminRule, identityOf, isConsoleAdmin, OidcClient, SignInError } from "./provider";

const REDIRECT = "https://gw.example/oauth/oidc/callback";

let op: Awaited<ReturnType<typeof memoryProvider>>;

/** Signs in through the in-memory provider, its ID token changed by `change`. */
async function signIn(change: IdTokenChange, answer?: (state: string) => URLSearchParams) {
  const binding = newLoginBinding(600);
  op.change(change);
  op.expectNonce(binding.nonce);
  const client = new OidcClient(op.settings, op.fetch);
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
  op = await memoryProvider();
});

describe("signing in at the OpenID provider", () => {
  it("asks for code + PKCE S256 + state + nonce with openid email profile, and reads sub and groups", async () => {
    const { url, result } = await signIn({});

    expect(url.origin + url.pathname).toBe(`${MEMORY_ISSUER}/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      client_id: MEMORY_CLIENT_ID,
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

  it.each<[string, IdTokenChange, RegExp]>([
    ["a wrong nonce", { wrongNonce: true }, /nonce/],
    ["another issuer", { claims: { iss: "https://evil.example" } }, /iss/],
    ["another audience", { claims: { aud: "someone-else" } }, /aud/],
    ["an expired token", { expired: true }, /exp|timestamp/],
    ["a key not in the provider's JWKS", { foreignKey: true }, /signature|key/i],
    ["a tampered payload", { tamper: true }, /signature/i],
  ])("refuses %s (400, saying what failed)", async (_name, change, detail) => {
    const error = await refusal((await signIn(change)).result);

    expect(error.status).toBe(400);
    expect(error.refused).toBe(false);
    expect(error.message).toMatch(/could not be verified/);
    expect(error.message).toMatch(detail);
  });

  it("refuses an answer whose state is not the sign-in's", async () => {
    const { result } = await signIn({}, () => new URLSearchParams({ code: "c0de", state: "forged" }));
    expect((await refusal(result)).message).toMatch(/state/);
  });

  it("reports the provider's refusal (the person cancelled) as such", async () => {
    const { result } = await signIn({}, (state) => new URLSearchParams({ error: "access_denied", state }));
    const error = await refusal(result);
    expect(error.refused).toBe(true);
    expect(error.message).toContain("access_denied");
  });

  it("reports an unreachable provider as 502", async () => {
    const client = new OidcClient(op.settings, (async () => {
      throw new TypeError("fetch failed");
    }) as typeof fetch);
    const error = await refusal(client.authorizationUrl(REDIRECT, newLoginBinding(600)));
    expect(error.status).toBe(502);
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
    // The rule that admitted them, which their console session is bound to.
    expect(consoleAdminRule(who("u1", ["gw-admins"]), admins)).toBe("group:gw-admins");
    expect(consoleAdminRule(who("u2", [], "boss@example.com"), admins)).toBe("user:Boss@Example.com");
    expect(consoleAdminRule(who("u3", ["eng"]), admins)).toBeUndefined();
  });
});
