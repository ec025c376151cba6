/** The admin plane (servers, secrets, keys) behind `requireAdmin`, and the admin function's app. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { registerAccessRoutes } from "./admin/access";
import { registerAuditRoutes } from "./admin/audit";
import { registerAuditStatsRoute } from "./admin/audit-stats";
import { auditChanges } from "./admin/change-audit";
import { registerKeyRoutes } from "./admin/keys";
import { registerAdminRoutes } from "./admin/routes";
import { registerToolsetRoutes } from "./admin/toolsets";
import { registerUpstreamAuthPages } from "./admin/upstream-auth-routes";
import { type AppDeps, createBaseApp, documentApp } from "./app-base";
import type { KeyIndex } from "./auth";
import { registerGatewayForwarding } from "./console/forward";
import { CONSOLE_OIDC_START, registerConsoleProviderSignIn } from "./console/provider-sign-in";
import { registerConsoleRoutes } from "./console/routes";
import type { ConsoleSessions } from "./console/session";
import type { AppEnv } from "./env";
import { requireAdmin, routeGroup } from "./route-groups";
import type { SourceThrottle } from "./throttle";

/**
 * Mounts the admin routes on `app`, each guarded by `requireAdmin`, and the admin console with its
 * session routes.
 */
export function registerAdminPlane(
  app: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  shared: { keyIndex: KeyIndex; consoleSessions: ConsoleSessions; tokenFailures: SourceThrottle },
): void {
  // Every admin change is an audit event (when there is an audit trail).
  const admin = routeGroup(requireAdmin, [403], [auditChanges(deps.audit)]);
  const adminDeps = { ...deps, fetch: deps.gateway?.fetch };
  registerAdminRoutes(admin, adminDeps);
  registerKeyRoutes(admin, { store: deps.store, keyChanges: shared.keyIndex });
  registerAccessRoutes(admin, { store: deps.store });
  registerToolsetRoutes(admin, { store: deps.store, logger: deps.logger });
  registerAuditRoutes(admin, deps);
  registerAuditStatsRoute(admin, { store: deps.store });
  app.route("/", admin);
  registerUpstreamAuthPages(app, adminDeps, {
    sessions: shared.consoleSessions,
    // The provider's sign-in comes back to the admin function's public URL.
    oidc: deps.publicAdminUrl ? deps.oidc : undefined,
    admins: deps.consoleAdmins ?? { group: undefined, users: [] },
    devSignIn: Boolean(deps.oauth?.devSignIn) && !deps.oidc,
  });
  // Provider sign-in needs the admin function's public URL for its redirect URI.
  const providerSignIn = deps.oidc && deps.publicAdminUrl ? deps.oidc : undefined;
  registerConsoleRoutes(app, {
    sessions: shared.consoleSessions,
    adminToken: deps.adminToken,
    failures: shared.tokenFailures,
    assets: deps.console,
    provider: providerSignIn && { name: providerSignIn.providerName, url: CONSOLE_OIDC_START },
    gatewayUrl: deps.gatewayUrl,
  });
  if (providerSignIn && deps.publicAdminUrl) {
    registerConsoleProviderSignIn(app, {
      sessions: shared.consoleSessions,
      oidc: providerSignIn,
      admins: deps.consoleAdmins ?? { group: undefined, users: [] },
      publicUrl: deps.publicAdminUrl.replace(/\/+$/, ""),
    });
  }
}

/**
 * The admin function's app: the common base and the admin plane alone (the console's tool calls
 * forwarded to `gatewayUrl` when given).
 */
export function createAdminApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const base = createBaseApp(deps);
  registerAdminPlane(base.app, deps, base);
  if (deps.gatewayUrl) {
    registerGatewayForwarding(base.app, { gatewayUrl: deps.gatewayUrl, adminToken: deps.adminToken });
  }
  const { app } = base;
  return documentApp(app);
}
