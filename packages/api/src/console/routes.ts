/**
 * The admin console's routes: its page and assets at `/` (same origin as the API, under a strict
 * CSP), and the session it signs in with (`/console/session`).
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { AppError, secretMatcher } from "@mcpgw/core";
import type { Context } from "hono";
import { refuseThrottled } from "../auth";
import type { AppEnv } from "../env";
import { json, jsonBody, problems, route } from "../openapi-helpers";
import { requireAdmin } from "../route-groups";
import { type SourceThrottle, sourceOf } from "../throttle";
import { ConsoleSession, ConsoleSignInOptions } from "../views";
import { CONSOLE_CSP, type ConsoleAssets } from "./assets";
import type { ConsoleSessions, SessionView } from "./session";

const SignIn = z.strictObject({ token: z.string().min(1).max(1024) });

/** Registers the console session routes, and the console itself when it is built (`assets`). */
export function registerConsoleRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: {
    sessions: ConsoleSessions;
    adminToken: string;
    /** Failed tokens per source, shared with the bearer-token check. */
    failures: SourceThrottle;
    assets: ConsoleAssets | undefined;
    /** The provider the console offers besides the admin token (see ./provider-sign-in.ts). */
    provider?: { name: string; url: string } | undefined;
    /** The gateway function's URL (GATEWAY_URL, deployed); else the gateway is this origin. */
    gatewayUrl?: string | undefined;
  },
): void {
  const isAdminToken = secretMatcher(deps.adminToken);
  // Where MCP clients reach the gateway: the console's "connect a client" configs name it.
  const withGateway = (c: Context, session: SessionView) => ({
    ...session,
    gatewayUrl: (deps.gatewayUrl ?? new URL(c.req.url).origin).replace(/\/+$/, ""),
  });
  app.openapi(
    createRoute({
      method: "post",
      path: "/console/session",
      tags: ["console"],
      summary: "Sign in to the console: the admin token for an HttpOnly session cookie",
      request: jsonBody(SignIn),
      responses: {
        201: json(ConsoleSession, "Signed in: the cookie is set; keep the CSRF token in memory"),
        ...problems(400, 401, 413, 415, 429),
      },
    }),
    async (c) => {
      const source = sourceOf(c);
      refuseThrottled(deps.failures, source);
      if (!isAdminToken(c.req.valid("json").token)) {
        deps.failures.count(source);
        throw new AppError("auth.unauthorized", "That is not the admin token.");
      }
      noStore(c);
      c.get("logger").info("console signed in");
      return c.json(withGateway(c, await deps.sessions.start(c, { via: "token" })), 201);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/console/sign-in",
      tags: ["console"],
      summary: "How an admin may sign in: the admin token, and the OpenID provider when one is configured",
      responses: { 200: json(ConsoleSignInOptions, "Sign-in options") },
    }),
    (c) => {
      noStore(c);
      return c.json({ provider: deps.provider ?? null }, 200);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/console/session",
      tags: ["console"],
      summary: "The console's session (after a reload): its CSRF token and expiry",
      responses: { 200: json(ConsoleSession, "Signed in"), ...problems(401) },
    }),
    async (c) => {
      const session = await deps.sessions.current(c);
      if (!session) throw new AppError("auth.unauthorized", "Not signed in.");
      noStore(c);
      return c.json(withGateway(c, session), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "delete",
      path: "/console/session",
      tags: ["console"],
      summary: "Sign out: the session ends and its cookie is cleared",
      responses: { 204: { description: "Signed out" }, ...problems(403) },
    }),
    async (c) => {
      // Signing out is a state change: a live session's needs its CSRF token too.
      const session = await deps.sessions.current(c);
      if (session) deps.sessions.checkCsrf(c, session);
      await deps.sessions.end(c);
      return c.body(null, 204);
    },
  );
  app.openapi(
    route({
      method: "delete",
      path: "/console/sessions",
      tags: ["console"],
      summary:
        "Sign everyone out: every console session ends (the admin token, or a session with its CSRF token)",
      middleware: [requireAdmin] as const,
      responses: { 204: { description: "Everyone signed out" }, ...problems(403) },
    }),
    async (c) => {
      await deps.sessions.endAll(c);
      c.get("logger").info("console signed everyone out");
      return c.body(null, 204);
    },
  );

  const { assets } = deps;
  if (!assets) return;
  app.get("/", () => serveFile(assets, "/"));
  app.get("/assets/:file", (c) => serveFile(assets, `/assets/${c.req.param("file")}`));
}

function serveFile(assets: ConsoleAssets, path: string): Response {
  const file = assets.get(path);
  if (!file) throw new AppError("request.not_found", `No console file at ${path}.`);
  return new Response(file.body, {
    headers: {
      "content-type": file.type,
      "cache-control": file.cacheControl,
      "content-security-policy": CONSOLE_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
    },
  });
}

function noStore(c: Context): void {
  c.header("cache-control", "no-store");
}
