import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { sendPage } from "../oauth/page";
import type { AdminDeps } from "./service";
import {
  CLIENT_METADATA_PATH,
  clientMetadataDocument,
  completeAuthorization,
  UPSTREAM_CALLBACK_PATH,
} from "./upstream-auth";

/** The longest query value the callback reads. */
const MAX_PARAM = 4_096;

/**
 * The admin function's public pages of upstream OAuth — OAuth protocol endpoints, not the REST API
 * (like the authorization server's own, they are not in the OpenAPI document): the callback the
 * upstream's authorization server redirects to (no credentials: bound to the stored single-use `state`
 * and PKCE; it answers a small HTML page) and the gateway's client metadata document (CIMD).
 */
export function registerUpstreamAuthPages(app: OpenAPIHono<AppEnv>, deps: AdminDeps): void {
  app.get(UPSTREAM_CALLBACK_PATH, async (c) => {
    const query = Object.fromEntries(
      ["state", "code", "iss", "error"].map((name) => {
        const value = c.req.query(name);
        return [name, value && value.length <= MAX_PARAM ? value : undefined];
      }),
    );
    const scoped = { ...deps, logger: c.get("logger") ?? deps.logger };
    const result = await completeAuthorization(scoped, query);
    return sendPage(c, result.status, result.html);
  });

  app.get(CLIENT_METADATA_PATH, (c) =>
    c.json(clientMetadataDocument(deps), 200, { "cache-control": "public, max-age=3600" }),
  );
}
