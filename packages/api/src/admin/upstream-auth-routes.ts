import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { pageCsp, pageHeaders } from "../oauth/page";
import { route } from "../openapi-helpers";
import type { AdminDeps } from "./service";
import {
  CLIENT_METADATA_PATH,
  clientMetadataDocument,
  completeAuthorization,
  UPSTREAM_CALLBACK_PATH,
} from "./upstream-auth";

const CallbackQuery = z.object({
  state: z
    .string()
    .max(512)
    .optional()
    .openapi({ param: { name: "state", in: "query" } }),
  code: z
    .string()
    .max(4_096)
    .optional()
    .openapi({ param: { name: "code", in: "query" } }),
  iss: z
    .string()
    .max(2_048)
    .optional()
    .openapi({ param: { name: "iss", in: "query" } }),
  error: z
    .string()
    .max(256)
    .optional()
    .openapi({ param: { name: "error", in: "query" } }),
});

/**
 * The admin function's public pages of upstream OAuth: the callback the upstream's authorization server
 * redirects to (no credentials: bound to the stored single-use `state` and PKCE) and the gateway's
 * client metadata document (CIMD).
 */
export function registerUpstreamAuthPages(app: OpenAPIHono<AppEnv>, deps: AdminDeps): void {
  app.openapi(
    {
      ...route({
        method: "get",
        path: UPSTREAM_CALLBACK_PATH,
        tags: ["upstream oauth"],
        summary: "Where an upstream's authorization server sends the admin back (code + state)",
        request: { query: CallbackQuery },
        responses: {
          200: {
            description: "Authorized: a small HTML page",
            content: { "text/html": { schema: z.string() } },
          },
          400: {
            description: "Unknown, used or expired state, or a refused code: a small HTML page",
            content: { "text/html": { schema: z.string() } },
          },
        },
      }),
      security: [],
    },
    async (c) => {
      const scoped = { ...deps, logger: c.get("logger") ?? deps.logger };
      const result = await completeAuthorization(scoped, c.req.valid("query"));
      return c.body(result.html, result.status, pageHeaders(pageCsp())) as never;
    },
  );

  app.openapi(
    {
      ...route({
        method: "get",
        path: CLIENT_METADATA_PATH,
        tags: ["upstream oauth"],
        summary: "The gateway's OAuth client metadata document (CIMD), for upstream authorization servers",
        responses: {
          200: {
            description: "The client metadata",
            content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
          },
        },
      }),
      security: [],
    },
    (c) => c.json(clientMetadataDocument(scoped(deps)), 200, { "cache-control": "public, max-age=3600" }),
  );
}

function scoped(deps: AdminDeps): AdminDeps {
  return deps;
}
