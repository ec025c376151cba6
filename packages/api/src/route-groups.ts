/**
 * Authorization by route group: the admin routes and the client (data-plane) routes each live in a
 * group of their own whose every route runs the group's guard first — a route added to a group is
 * guarded by registering it there, never by matching its path. (Hono sub-app middleware mounted at
 * "/" would run for every route of the parent, so the guard rides on each route instead.)
 */
import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { AppError, describeIssues, fieldsRefused } from "@mcpgw/core";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";
import { problems } from "./openapi-helpers";

/** The app's validation hook: a request that breaks a route's schema is 400 `request.invalid`. */
export function validationHook(result: { success: boolean; error?: unknown }): void {
  if (result.success) return;
  const issues = (result.error as { issues: Array<{ path: PropertyKey[]; message: string }> }).issues;
  throw fieldsRefused("request.invalid", describeIssues(issues));
}

/** The admin token only: a client API key gets 403 `auth.forbidden`. */
export const requireAdmin = createMiddleware<AppEnv>(async function requireAdmin(c, next) {
  const principal = c.get("principal");
  if (!principal) throw new AppError("auth.unauthorized", "Missing or invalid bearer token.");
  if (principal.kind !== "admin")
    throw new AppError("auth.forbidden", "Client API keys cannot use admin routes.");
  await next();
});

/** The admin token or a client API key (the data plane; scopes and ownership are checked per route). */
export const requireClient = createMiddleware<AppEnv>(async function requireClient(c, next) {
  if (!c.get("principal")) throw new AppError("auth.unauthorized", "Missing or invalid bearer token.");
  await next();
});

/** A group of routes behind one guard, mounted on the app with `app.route("/", group)`. */
export type RouteGroup = OpenAPIHono<AppEnv> & {
  /** The group's guard, for the plain (non-OpenAPI) routes it registers. */
  guard: MiddlewareHandler<AppEnv>;
};

/**
 * A route group: every OpenAPI route registered on it runs `guard` first (then `after`, e.g. the data
 * plane's limits) and documents the statuses they may answer (`guardStatuses`, e.g. 403 for the admin group).
 */
export function routeGroup(
  guard: MiddlewareHandler<AppEnv>,
  guardStatuses: number[],
  after: MiddlewareHandler<AppEnv>[] = [],
): RouteGroup {
  const group = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const register = group.openapi.bind(group);
  const guarded = (route: RouteConfig, ...rest: unknown[]) =>
    (register as (...args: unknown[]) => unknown)(
      {
        ...route,
        middleware: [guard, ...after, ...[route.middleware ?? []].flat()],
        responses: { ...problems(...guardStatuses), ...route.responses },
      },
      ...rest,
    );
  return Object.assign(group, { openapi: guarded as never, guard });
}
