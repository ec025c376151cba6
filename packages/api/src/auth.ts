import { API_KEY_PREFIX, type ApiKeyInfo, type ApiKeyStore, hashApiKey } from "@mcpgw/aws";
import { AppError, bearerToken, secretMatcher } from "@mcpgw/core";
import { recordRateLimited } from "@mcpgw/telemetry";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { SessionAdmin } from "./console/session";
import type { AppEnv, Principal } from "./env";
import type { ProtectedResource } from "./oauth/resource";
import { rateLimited, type SourceThrottle, sourceOf, type ThrottleRule } from "./throttle";

/**
 * How many wrong secrets (bearer tokens, console sign-in tokens) one source may present per minute
 * before it is answered 429 for the rest of that minute.
 */
export const TOKEN_FAILURES: ThrottleRule = { limit: 20, windowMs: 60_000 };

/** Refuses (429 `rate_limited`) a source over its limit of failed tokens. */
export function refuseThrottled(failures: SourceThrottle, source: string): void {
  const wait = failures.waitOf(source);
  if (wait !== undefined) {
    recordRateLimited("failed_tokens");
    throw rateLimited("Too many wrong tokens from this address.", wait);
  }
}

/** How old the in-memory key index may be when it answers: the bound on how late a revocation takes effect. */
export const KEY_CACHE_MS = 2_000;

/**
 * How far back this process's own key changes are replayed over a fresh index: the index is read from
 * an eventually consistent GSI, which may not show a create or revoke of the last moment yet.
 */
const INDEX_LAG_MS = 1_000;

type KeyMap = Map<string, ApiKeyInfo>;

/**
 * Every live key by hash, in memory. A lookup answers from the index while it is younger than
 * KEY_CACHE_MS; an older index is refreshed first by one paginated query, shared by all callers. So
 * unknown tokens, however many, cost no read each — at most one query per KEY_CACHE_MS in all — and a
 * revocation elsewhere takes effect within KEY_CACHE_MS. Keys created or revoked in this process
 * count at once (`added`, `revoked`).
 */
export class KeyIndex {
  private current: { at: number; byHash: KeyMap } | undefined;
  private refreshing: Promise<KeyMap> | undefined;
  private changes: Array<{ at: number; apply: (byHash: KeyMap) => void }> = [];

  constructor(
    private readonly keys: Pick<ApiKeyStore, "byHash">,
    private readonly maxAgeMs = KEY_CACHE_MS,
  ) {}

  /** The key's info when `token` is a live key. */
  async verify(token: string): Promise<ApiKeyInfo | undefined> {
    // The cheap shape check first: most junk never gets hashed, and nothing here ever logs a token.
    if (!token.startsWith(API_KEY_PREFIX)) return undefined;
    const byHash = await this.fresh();
    return byHash.get(hashApiKey(token));
  }

  /** A key this process just created: usable at once. */
  added(key: string, info: ApiKeyInfo): void {
    const hash = hashApiKey(key);
    this.change((byHash) => byHash.set(hash, info));
  }

  /** A key this process just revoked: refused at once. */
  revoked(id: string): void {
    this.change((byHash) => {
      for (const [hash, info] of byHash) if (info.id === id) byHash.delete(hash);
    });
  }

  private change(apply: (byHash: KeyMap) => void): void {
    this.changes.push({ at: Date.now(), apply });
    if (this.current) apply(this.current.byHash);
  }

  private fresh(): Promise<KeyMap> {
    if (this.current && Date.now() - this.current.at < this.maxAgeMs)
      return Promise.resolve(this.current.byHash);
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async load(): Promise<KeyMap> {
    // Aged from when the read started: nothing revoked before it is served for longer than maxAgeMs.
    const at = Date.now();
    const byHash = await this.keys.byHash();
    this.changes = this.changes.filter((change) => change.at >= at - INDEX_LAG_MS);
    for (const change of this.changes) change.apply(byHash);
    this.current = { at, byHash };
    return byHash;
  }
}

/**
 * Who is calling: the admin token or a client API key (set as the request's `principal`), or — where
 * `consoleSession` is given, for a request with no bearer token — the admin signed in to the console;
 * where `protectedResource` is given (the MCP endpoints with OAuth on), a user's access token, and
 * refusals carry its challenge; anything else is 401. What each may use is the route groups' business
 * (`requireAdmin`, `requireClient`). A source whose bearer tokens failed too often (`failures`) is
 * answered 429 `rate_limited` before its token is even looked at, whatever it sends.
 */
export function authenticate(options: {
  adminToken: string;
  verifyKey: (key: string) => Promise<ApiKeyInfo | undefined>;
  consoleSession?: (c: Context) => Promise<SessionAdmin | undefined>;
  protectedResource?: ProtectedResource | undefined;
  failures: SourceThrottle;
}) {
  const isAdminToken = secretMatcher(options.adminToken);
  const { failures } = options;
  return createMiddleware<AppEnv>(async function authenticate(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    const source = sourceOf(c);
    if (token) refuseThrottled(failures, source);
    if (token && isAdminToken(token)) {
      c.set("principal", { kind: "admin" });
      return next();
    }
    const session = token ? undefined : await options.consoleSession?.(c);
    if (session) {
      c.set("principal", { kind: "admin", via: "console", ...session });
      return next();
    }
    const key = token ? await options.verifyKey(token) : undefined;
    if (!key && options.protectedResource) {
      const refused = await options.protectedResource.authenticate(c, token, next);
      if (token && refused?.status === 401) failures.count(source);
      return refused;
    }
    if (!key) {
      if (token) failures.count(source);
      throw new AppError("auth.unauthorized", "Missing or invalid bearer token.");
    }
    c.set("principal", keyPrincipal(key));
    await next();
  });
}

/** The principal a key's requests carry: its servers, owner, limits, tool sets and tool policy. */
export function keyPrincipal(key: ApiKeyInfo): Principal {
  return {
    kind: "key",
    keyId: key.id,
    keyName: key.name,
    serverIds: key.serverIds,
    owner: key.owner,
    rateLimit: key.rateLimit,
    toolsets: key.toolsets,
    toolPolicy: key.toolPolicy,
  };
}
