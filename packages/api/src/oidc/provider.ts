/**
 * The gateway as a relying party of the OpenID provider people sign in with (OIDC_ISSUER): the
 * authorization request (code, PKCE S256, state, nonce; scopes `openid email profile`) and its answer —
 * the code exchanged, the ID token verified by `openid-client` (issuer, audience, signature against
 * the provider's JWKS, nonce, expiry) — turned into the user (`sub`) and their groups.
 */
import type { ConsoleAdminSettings, OidcSettings } from "@mcpgw/aws";
import { isIdentityName } from "@mcpgw/core";
import type * as oidc from "openid-client";
import type { LoginBinding } from "./binding";

/**
 * openid-client (with oauth4webapi), loaded by the first sign-in's discovery: a deployment without
 * OIDC never loads it, and a cold start with OIDC only when someone signs in.
 */
let openidClient: Promise<typeof oidc> | undefined;
const loadOpenidClient = () => (openidClient ??= import("openid-client"));

/** The scopes asked of the provider. */
export const OIDC_SCOPES = "openid email profile";
/** The most groups a sign-in records (the rest are dropped). */
const MAX_GROUPS = 100;

/** Who signed in at the provider. */
export interface OidcIdentity {
  /** The provider's `sub`: the user of access mappings (`user:<sub>`). */
  sub: string;
  /** The groups of the configured claim that are usable names, sorted. */
  groups: string[];
  /** The email, when the provider says it is verified. */
  email: string | undefined;
  /** What pages show: the name or email, else the sub. */
  label: string;
}

/**
 * A sign-in that failed. `refused`: the provider answered with an error (the person cancelled, or was
 * not allowed); otherwise its answer could not be verified (400) or it could not be reached (502).
 */
export class SignInError extends Error {
  override readonly name = "SignInError";
  constructor(
    message: string,
    readonly status: 400 | 502,
    readonly refused = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The provider, discovered once per process (again after a failed discovery). */
export class OidcClient {
  /** What the sign-in button names. */
  readonly providerName: string;
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(
    private readonly settings: OidcSettings,
    private readonly fetchImpl?: typeof fetch,
  ) {
    this.providerName = settings.providerName;
  }

  /** Where to send the browser to sign in, coming back to `redirectUri`. */
  async authorizationUrl(redirectUri: string, binding: LoginBinding): Promise<URL> {
    const config = await this.config();
    const openid = await loadOpenidClient();
    return openid.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: OIDC_SCOPES,
      state: binding.state,
      nonce: binding.nonce,
      code_challenge: binding.challenge,
      code_challenge_method: "S256",
    });
  }

  /**
   * The provider's answer on `redirectUri` (its query, `params`): the code exchanged and the ID token
   * verified. Throws a {@link SignInError} saying what failed.
   */
  async signIn(redirectUri: string, params: URLSearchParams, binding: LoginBinding): Promise<OidcIdentity> {
    const config = await this.config();
    const openid = await loadOpenidClient();
    const current = new URL(redirectUri);
    for (const [name, value] of params) current.searchParams.append(name, value);
    let claims: oidc.IDToken | undefined;
    try {
      const tokens = await openid.authorizationCodeGrant(config, current, {
        expectedState: binding.state,
        expectedNonce: binding.nonce,
        pkceCodeVerifier: binding.verifier,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (error) {
      throw signInErrorOf(openid, error);
    }
    if (!claims) throw new SignInError("The identity provider sent no ID token.", 400);
    return identityOf(claims, this.settings.groupsClaim);
  }

  private config(): Promise<oidc.Configuration> {
    this.configuration ??= this.discover().catch((error) => {
      this.configuration = undefined;
      throw new SignInError("The identity provider could not be reached (discovery failed).", 502, false, {
        cause: error,
      });
    });
    return this.configuration;
  }

  private async discover(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    const openid = await loadOpenidClient();
    // A public client (no secret) authenticates by PKCE alone.
    const insecure = new URL(issuer).protocol === "http:";
    const config = await openid.discovery(
      new URL(issuer),
      clientId,
      clientSecret,
      !clientSecret
        ? openid.None()
        : this.settings.tokenAuthMethod === "client_secret_post"
          ? openid.ClientSecretPost(clientSecret)
          : openid.ClientSecretBasic(clientSecret),
      {
        ...(this.fetchImpl ? { [openid.customFetch]: this.fetchImpl as oidc.CustomFetch } : {}),
        // http only reaches here for a loopback issuer (config refuses it otherwise): a provider on this machine.
        execute: insecure ? [openid.allowInsecureRequests] : [],
      },
    );
    // The ID token's signature is checked against the provider's JWKS (not only trusted over TLS).
    openid.enableNonRepudiationChecks(config);
    return config;
  }
}

/** The identity in verified ID-token claims: `sub`, groups from `groupsClaim`, a verified email. */
export function identityOf(claims: Record<string, unknown>, groupsClaim: string): OidcIdentity {
  const sub = typeof claims.sub === "string" ? claims.sub : "";
  if (!isIdentityName(sub)) {
    throw new SignInError(
      "The identity provider's user id (sub) cannot be used here (1-255 letters, digits, . _ @ | + = ~ - or inner spaces).",
      400,
    );
  }
  const raw = claims[groupsClaim];
  const listed = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(/[\s,]+/) : [];
  const groups = [
    ...new Set(listed.filter((group): group is string => typeof group === "string" && isIdentityName(group))),
  ]
    .sort()
    .slice(0, MAX_GROUPS);
  const email = typeof claims.email === "string" && claims.email_verified === true ? claims.email : undefined;
  const name = typeof claims.name === "string" && claims.name.trim() ? claims.name.trim() : undefined;
  return { sub, groups, email, label: name ?? email ?? sub };
}

/** Whether `identity` may use the console: a member of the admin group, or listed by sub or verified email. */
export function isConsoleAdmin(identity: OidcIdentity, admins: ConsoleAdminSettings): boolean {
  return consoleAdminRule(identity, admins) !== undefined;
}

/** A console admission rule as sessions are bound to it: the admin group, or one CONSOLE_ADMINS entry. */
const groupRule = (group: string) => `group:${group}`;
const userRule = (user: string) => `user:${user}`;

/**
 * The provider sign-in's rules that admit now: `group:<CONSOLE_ADMIN_GROUP>`, and `user:<entry>` per
 * CONSOLE_ADMINS entry (as {@link consoleAdminRule} names the one that admitted a person).
 */
export function providerRules(admins: ConsoleAdminSettings): string[] {
  return [...(admins.group === undefined ? [] : [groupRule(admins.group)]), ...admins.users.map(userRule)];
}

/**
 * The rule that makes `identity` a console admin — `group:<CONSOLE_ADMIN_GROUP>` or `user:<the
 * CONSOLE_ADMINS entry>` — or undefined when none does.
 */
export function consoleAdminRule(identity: OidcIdentity, admins: ConsoleAdminSettings): string | undefined {
  if (admins.group !== undefined && identity.groups.includes(admins.group)) return groupRule(admins.group);
  const email = identity.email?.toLowerCase();
  const user = admins.users.find(
    (user) => user === identity.sub || (email !== undefined && user.toLowerCase() === email),
  );
  return user === undefined ? undefined : userRule(user);
}

/** What went wrong, said for a person (no token, code or secret in it); `openid`: openid-client, loaded. */
function signInErrorOf(openid: typeof oidc, error: unknown): SignInError {
  if (error instanceof openid.AuthorizationResponseError) {
    return new SignInError(`The identity provider refused the sign-in (${error.error}).`, 400, true, {
      cause: error,
    });
  }
  if (error instanceof openid.ResponseBodyError) {
    return new SignInError(`The identity provider refused the code exchange (${error.error}).`, 400, false, {
      cause: error,
    });
  }
  if (error instanceof openid.ClientError) {
    // The library's own detail (which claim, which check) is in its cause; it quotes no token.
    const detail = error.cause instanceof Error && error.cause.message ? error.cause.message : error.message;
    return new SignInError(`The identity provider's answer could not be verified: ${detail}.`, 400, false, {
      cause: error,
    });
  }
  return new SignInError("The identity provider could not be reached.", 502, false, { cause: error });
}
