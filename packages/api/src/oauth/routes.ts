/**
 * The OAuth 2.1 authorization server on the gateway plane, one module per endpoint: metadata
 * (RFC 8414) and JWKS, dynamic client registration (RFC 7591), the authorization endpoint — sign-in at
 * the configured OpenID provider (OIDC_ISSUER; its callback `/oauth/oidc/callback`) or, without one,
 * the development sign-in page — and the consent page, the token endpoint (code + PKCE S256,
 * refresh-token rotation) and revocation (RFC 7009). Access tokens are ES256 JWTs for one exact
 * resource, `${issuer}/mcp` or `${issuer}/mcp/{server}`.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Store } from "@mcpgw/aws";
import type { Logger } from "@mcpgw/core";
import { lazyBodyLimit } from "../body-limit";
import type { AppEnv } from "../env";
import type { OidcClient } from "../oidc/provider";
import { SourceThrottle, type ThrottleRule } from "../throttle";
import { registerAuthorizeRoutes } from "./authorize";
import { ClientDirectory } from "./clients";
import type { AuthorizationServer, OAuthOptions } from "./http";
import { registerMetadataRoutes } from "./metadata";
import { registerProviderCallback } from "./oidc-sign-in";
import { registerRegistrationRoute } from "./registration";
import { ResourceCheck } from "./resource-check";
import { registerTokenRoutes } from "./token";

export type { OAuthOptions } from "./http";

/** Where the OpenID provider sends the browser back. */
export const OIDC_CALLBACK_PATH = "/oauth/oidc/callback";
const MAX_FORM_BYTES = 16 * 1024;
/** Client registrations one source may make per minute (unused ones expire: see ./clients.ts). */
export const REGISTRATIONS: ThrottleRule = { limit: 20, windowMs: 60_000 };
/** Authorization requests one source may start per minute (each may fetch a metadata document). */
export const AUTHORIZATIONS: ThrottleRule = { limit: 60, windowMs: 60_000 };

/** Registers the authorization server's routes on `app`. */
export function registerOAuthRoutes(
  app: OpenAPIHono<AppEnv>,
  deps: {
    store: Store;
    logger: Logger;
    oauth: OAuthOptions;
    fetch: typeof fetch;
    /** The OpenID provider people sign in with; the development sign-in is off when there is one. */
    oidc?: OidcClient | undefined;
  },
): void {
  const { store, oauth, oidc } = deps;
  // Read per request: an in-process test stack learns its own origin (the issuer) once it listens.
  const issuerOf = () => oauth.issuer.replace(/\/+$/, "");
  const server: AuthorizationServer = {
    store,
    logger: deps.logger,
    oauth,
    oidc,
    devSignIn: oauth.devSignIn && !oidc,
    issuerOf,
    callbackPath: OIDC_CALLBACK_PATH,
    clients: new ClientDirectory(store.oauth, oauth.fetch ?? deps.fetch),
    resources: new ResourceCheck(store, issuerOf),
  };

  app.use(
    "/oauth/*",
    lazyBodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: (c) => c.json({ error: "invalid_request", error_description: "Request body too large" }, 413),
    }),
  );
  registerMetadataRoutes(app, server);
  registerRegistrationRoute(app, server, new SourceThrottle(REGISTRATIONS));
  registerAuthorizeRoutes(app, server, new SourceThrottle(AUTHORIZATIONS));
  registerProviderCallback(app, server);
  registerTokenRoutes(app, server);
}
