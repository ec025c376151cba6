/** The admin plane (servers, secrets, keys) behind `requireAdmin`, and the admin function's app. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { registerKeyRoutes } from "./admin/keys";
import { registerAdminRoutes } from "./admin/routes";
import { type AppDeps, createBaseApp, documentApp } from "./app-base";
import type { KeyIndex } from "./auth";
import type { AppEnv } from "./env";
import { requireAdmin, routeGroup } from "./route-groups";

/** Mounts the admin routes on `app`, each guarded by `requireAdmin`. */
export function registerAdminPlane(app: OpenAPIHono<AppEnv>, deps: AppDeps, keyIndex: KeyIndex): void {
  const admin = routeGroup(requireAdmin, [403]);
  registerAdminRoutes(admin, deps);
  registerKeyRoutes(admin, { store: deps.store, keyChanges: keyIndex });
  app.route("/", admin);
}

/** The admin function's app: the common base and the admin plane alone. */
export function createAdminApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const { app, keyIndex } = createBaseApp(deps);
  registerAdminPlane(app, deps, keyIndex);
  return documentApp(app);
}
