import type { OpenAPIHono } from "@hono/zod-openapi";
import { hashState } from "@mcpgw/aws";
import { deleteCookie, getCookie } from "hono/cookie";
import type { AppEnv } from "../env";
import { sendPage } from "../oauth/page";
import { publicAdminBase } from "../upstream-authorization";
import type { AdminDeps } from "./service";
import {
  CLIENT_METADATA_PATH,
  clientMetadataDocument,
  completeAuthorization,
  UPSTREAM_CALLBACK_PATH,
} from "./upstream-auth";
import { holderCookie, type LinkSignIn, registerUpstreamLinkPages } from "./upstream-link";

/** The longest query value the callback reads. */
const MAX_PARAM = 4_096;

/**
 * The admin function's public pages of upstream OAuth — OAuth protocol endpoints, not the REST API
 * (like the authorization server's own, they are not in the OpenAPI document): the callback the
 * upstream's authorization server redirects to (no credentials: bound to the stored single-use `state`
 * and PKCE, and for a caller's own authorization to the browser that opened its link; it answers a
 * small HTML page), the caller's link with its sign-in (./upstream-link.ts, when the admin function's
 * public URL is known) and the gateway's client metadata document (CIMD).
 */
export function registerUpstreamAuthPages(
  app: OpenAPIHono<AppEnv>,
  deps: AdminDeps,
  signIn?: Omit<LinkSignIn, "store" | "logger" | "publicUrl">,
): void {
  if (signIn && deps.publicAdminUrl)
    registerUpstreamLinkPages(app, {
      ...signIn,
      store: deps.store,
      logger: deps.logger,
      publicUrl: publicAdminBase(deps),
    });
  app.get(UPSTREAM_CALLBACK_PATH, async (c) => {
    const query = Object.fromEntries(
      ["state", "code", "iss", "error"].map((name) => {
        const value = c.req.query(name);
        return [name, value && value.length <= MAX_PARAM ? value : undefined];
      }),
    );
    const scoped = { ...deps, logger: c.get("logger") ?? deps.logger };
    // The secret of the browser that opened a caller's link (none for the shared connection's).
    const cookie = query.state ? holderCookie(query.state) : undefined;
    const holder = cookie ? getCookie(c, cookie) : undefined;
    if (cookie && holder) deleteCookie(c, cookie, { path: UPSTREAM_CALLBACK_PATH });
    const result = await completeAuthorization(scoped, query, holder && hashState(holder));
    return sendPage(c, result.status, result.html);
  });

  app.get(CLIENT_METADATA_PATH, async (c) =>
    c.json(await clientMetadataDocument(deps), 200, { "cache-control": "public, max-age=3600" }),
  );
}
