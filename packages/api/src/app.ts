import { swaggerUI } from "@hono/swagger-ui";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Store } from "@mcpgw/aws";
import { AppError, describeIssues, type Logger } from "@mcpgw/core";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { registerAdminRoutes } from "./admin/routes";
import { adminAuth } from "./auth";
import type { AppEnv } from "./env";
import { onError, problemOf } from "./problem";

/** Everything the HTTP app needs from its surroundings. */
export interface AppDeps {
  store: Store;
  logger: Logger;
  adminToken: string;
  allowPrivateUpstreams: boolean;
}

/** The largest request body accepted. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The gateway's HTTP app: admin API, OpenAPI document and docs; the same app locally and on Lambda. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const errors = describeIssues(result.error.issues);
        throw new AppError("request.invalid", errors.join("; "), { errors });
      }
    },
  });
  app.onError(onError);
  app.notFound((c) => problemOf(c, "request.not_found", `No route for ${c.req.method} ${c.req.path}.`));

  app.use(requestId());
  app.use(async function accessLog(c, next) {
    const started = performance.now();
    const logger = deps.logger.child({ requestId: c.get("requestId") });
    c.set("logger", logger);
    await next();
    logger.info("request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    });
  });
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => problemOf(c, "request.too_large", `The request body exceeds ${MAX_BODY_BYTES} bytes.`),
    }),
  );

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.use("/v1/*", adminAuth(deps.adminToken));
  registerAdminRoutes(app, deps);

  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", { type: "http", scheme: "bearer" });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "MCP Gateway",
      version: "1.0.0",
      description: "Register MCP servers, watch their status, and call their tools through one front door.",
    },
  });
  app.get("/docs", swaggerUI({ url: "/openapi.json" }));
  return app;
}
