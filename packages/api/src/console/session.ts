/**
 * Admin console sign-in. The admin pastes the admin token once; it is exchanged for a session cookie
 * (HttpOnly, SameSite=Strict, Secure over HTTPS, expiring) whose value is the session's only copy —
 * the store keeps its hash. Requests authenticated by the cookie that change state must carry the
 * session's CSRF token in `X-CSRF-Token`: an HMAC of the cookie value, which the console learns from
 * the sign-in answer (or `GET /console/session`) and keeps in memory, never in storage.
 *
 * A session is bound to what let it in: a keyed fingerprint of the admin token (never the token), or
 * the provider sign-in's admission rule (the admin group, or the CONSOLE_ADMINS entry). It is honoured
 * only while that still admits — rotating ADMIN_TOKEN, changing the admin group or removing the entry
 * ends it — and only until everyone is signed out (`DELETE /console/sessions`).
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import type { ConsoleSessionStore } from "@mcpgw/aws";
import { AppError, secretsEqual } from "@mcpgw/core";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

/** The session cookie's name. */
export const SESSION_COOKIE = "mgw_console";
/** The header a cookie-authenticated state change must carry. */
export const CSRF_HEADER = "x-csrf-token";
/** The header the admin function's forwarding sets on the console's tool calls to the gateway function (audited as the console's). */
export const CONSOLE_CALL_HEADER = "x-mcpgw-console";
/** With it: the console session's provider subject and the browser's address, audited by the gateway (admin token only). */
export const CONSOLE_SUB_HEADER = "x-mcpgw-console-sub";
export const CONSOLE_SOURCE_HEADER = "x-mcpgw-console-source";
/** How long a console session lasts. */
export const SESSION_TTL_MS = 12 * 60 * 60_000;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A live session as the console sees it. */
export interface SessionView {
  csrfToken: string;
  expiresAt: string;
}

/**
 * What let a session in: the admin token, or the provider sign-in by a rule that admitted its person
 * (`sub`, kept with the session so the audit trail names who changed what).
 */
export type SessionGrant = { via: "token" } | { via: "provider"; rule: string; sub: string };

/** The admin a live console session stands for: their provider subject when they signed in there. */
export interface SessionAdmin {
  sub?: string;
}

/** Console sessions of one deployment: issued, checked and ended against the store. */
export class ConsoleSessions {
  private readonly key: Buffer;
  private readonly tokenBinding: string;
  /** The bindings of every way in that admits now: the admin token's, and each provider rule's. */
  private readonly admitting: Set<string>;

  constructor(
    private readonly store: ConsoleSessionStore,
    adminToken: string,
    /** The provider sign-in's rules that admit now (see `providerRules` in oidc/provider.ts); none without one. */
    rules: string[] = [],
    private readonly ttlMs = SESSION_TTL_MS,
  ) {
    this.key = createHash("sha256").update("mcpgw console\0").update(adminToken).digest();
    this.tokenBinding = `token:${createHmac("sha256", adminToken).update("mcpgw console session").digest("base64url")}`;
    this.admitting = new Set([this.tokenBinding, ...rules.map(ruleBinding)]);
  }

  /** Starts a session: sets its cookie on `c` and answers what the console keeps in memory. */
  async start(c: Context, grant: SessionGrant): Promise<SessionView> {
    const value = randomBytes(32).toString("base64url");
    const expiresAt = new Date(Date.now() + this.ttlMs);
    const binding = grant.via === "token" ? this.tokenBinding : ruleBinding(grant.rule);
    const sub = grant.via === "provider" ? grant.sub : undefined;
    await this.store.create(hashOf(value), { expiresAt, binding, sub });
    setCookie(c, SESSION_COOKIE, value, {
      httpOnly: true,
      sameSite: "Strict",
      secure: isHttps(c),
      path: "/",
      expires: expiresAt,
    });
    return { csrfToken: this.csrfOf(value), expiresAt: expiresAt.toISOString() };
  }

  /** The request's live session, if its cookie names one. */
  async current(c: Context): Promise<SessionView | undefined> {
    return (await this.live(c))?.view;
  }

  /**
   * The admin of the request's live console session (undefined: none); a state change without the
   * session's CSRF token is refused (403 `auth.csrf_failed`).
   */
  async authenticates(c: Context): Promise<SessionAdmin | undefined> {
    const live = await this.live(c);
    if (!live) return undefined;
    this.checkCsrf(c, live.view);
    return live.sub ? { sub: live.sub } : {};
  }

  /** Refuses a state change of `session` without its CSRF token (403 `auth.csrf_failed`). */
  checkCsrf(c: Context, session: SessionView): void {
    if (SAFE_METHODS.has(c.req.method)) return;
    const given = c.req.header(CSRF_HEADER);
    if (!given || !secretsEqual(given, session.csrfToken)) {
      throw new AppError(
        "auth.csrf_failed",
        `A console request that changes state needs the ${CSRF_HEADER} header.`,
      );
    }
  }

  /** Ends the request's session (sign-out) and clears its cookie. */
  async end(c: Context): Promise<void> {
    const value = getCookie(c, SESSION_COOKIE);
    if (value && value.length <= 128) await this.store.delete(hashOf(value));
    deleteCookie(c, SESSION_COOKIE, { path: "/", secure: isHttps(c), httpOnly: true, sameSite: "Strict" });
  }

  /** Signs everyone out: every session started so far ends, here and in every other instance. */
  async endAll(c: Context): Promise<void> {
    await this.store.endAll();
    await this.end(c);
  }

  /** The request's live session as the console sees it, and whom it stands for. */
  private async live(c: Context): Promise<{ view: SessionView; sub?: string | undefined } | undefined> {
    const value = getCookie(c, SESSION_COOKIE);
    if (!value || value.length > 128) return undefined;
    const session = await this.store.find(hashOf(value));
    if (!session || !this.admitting.has(session.binding)) return undefined;
    const view = { csrfToken: this.csrfOf(value), expiresAt: session.expiresAt.toISOString() };
    return { view, sub: session.sub };
  }

  private csrfOf(value: string): string {
    return createHmac("sha256", this.key).update(value).digest("base64url");
  }
}

/** A provider rule as stored with a session (a hash: the store holds no names). */
function ruleBinding(rule: string): string {
  return `provider:${createHash("sha256").update("mcpgw console rule\0").update(rule).digest("base64url")}`;
}

function hashOf(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

/** Whether the client reached us over HTTPS (directly, or as the front that forwarded it says). */
function isHttps(c: Context): boolean {
  const forwarded = c.req.header("x-forwarded-proto");
  return (forwarded ?? new URL(c.req.url).protocol.replace(":", "")).split(",")[0]?.trim() === "https";
}
