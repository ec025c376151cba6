/**
 * An MCP client signing in to the gateway the standard way, headless: the official SDK v2 client's
 * OAuth provider, and the development sign-in and consent pages answered as a person would.
 */
import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { reaches } from "./servers";
import { type Stack, startStack } from "./stack";

/** A headless SDK client: remembers what the SDK hands it (in memory, nothing stored). */
export class TestProvider implements OAuthClientProvider {
  authorizationUrl?: URL;
  info?: StoredOAuthClientInformation;
  tok?: StoredOAuthTokens;
  private verifier?: string;
  private disc?: OAuthDiscoveryState;
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
  ) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "gw-test",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return "s1";
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.tok;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.tok = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier ?? "";
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.disc = state;
  }
  discoveryState() {
    return this.disc;
  }
}

/** The hidden inputs of the page's form. */
export function formFields(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
}

/**
 * Signs in as `user` on the gateway's development page at `origin` and answers the consent; every
 * step's response, and where the last one redirects.
 */
export async function signIn(
  origin: string,
  authorizationUrl: URL,
  user: string,
  decision = "allow",
  groups = "",
) {
  const first = await fetch(authorizationUrl, { redirect: "manual" });
  const signInHtml = await first.text();
  expect(first.status, signInHtml).toBe(200);
  const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const post = (body: Record<string, string>) =>
    fetch(`${origin}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin },
      body: new URLSearchParams(body),
    });
  const consent = await post({ ...formFields(signInHtml), user, groups });
  const consentHtml = await consent.text();
  expect(consent.status, consentHtml).toBe(200);
  const done = await post({ ...formFields(consentHtml), decision });
  return {
    first,
    signInHtml,
    consent,
    consentHtml,
    done,
    location: new URL(done.headers.get("location") ?? ""),
  };
}

/** Where a test client's authorization ends (never reached: the code is read off the redirect). */
export const TEST_REDIRECT = "http://127.0.0.1:9/callback";

/** An SDK v2 client connected to `url` (on the gateway at `origin`) as `user`, through the whole authorization flow. */
export async function signedInClient(origin: string, url: URL, user: string) {
  const provider = new TestProvider(TEST_REDIRECT);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await expect(new Client({ name: "oauth-test", version: "1" }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  const { location } = await signIn(origin, provider.authorizationUrl as URL, user);
  await first.finishAuth(location.searchParams);
  const client = new Client({ name: "oauth-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return { client, provider };
}

/** A stack serving OAuth, with one connected upstream server per name (close the upstreams too). */
export async function startOAuthStack(servers: string[]): Promise<{ stack: Stack; upstreams: Upstream[] }> {
  const stack = await startStack({ oauth: true });
  const upstreams: Upstream[] = [];
  for (const name of servers) {
    const upstream = await startUpstream({ name });
    upstreams.push(upstream);
    const created = await stack.call("POST", "/v1/servers", { name, url: upstream.url });
    await reaches(stack, created.body.id, "connected");
  }
  return { stack, upstreams };
}
