import type { OpenAPIHono } from "@hono/zod-openapi";
import { registerAdminPlane } from "./admin-app";
import { type AppDeps, createBaseApp, documentApp } from "./app-base";
import type { AppEnv } from "./env";
import { registerGatewayPlane } from "./gateway-app";

export { type AppDeps, MAX_BODY_BYTES } from "./app-base";

/**
 * The whole HTTP app: the admin API (control plane) and/or the data plane, with the OpenAPI document
 * and docs — what `npm run dev` and the in-process tests serve. Each Lambda builds only its own plane
 * instead (`createAdminApp`, `createGatewayApp`).
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const serve = { admin: deps.serve?.admin ?? true, gateway: deps.serve?.gateway ?? true };
  const base = createBaseApp(deps);
  const { app } = base;
  // Each plane is a route group behind its own guard.
  if (serve.admin) registerAdminPlane(app, deps, base);
  if (serve.gateway) registerGatewayPlane(app, deps);
  return documentApp(app);
}
