/** The authorization server's public documents: its RFC 8414 metadata and its JWK set. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import type { AuthorizationServer } from "./http";
import { MCP_SCOPE } from "./jwt";

/** The RFC 8414 metadata of the authorization server at `issuer`. */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/oauth/jwks`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [MCP_SCOPE],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/** Serves the metadata and the JWK set: public, CORS-open, cacheable for five minutes. */
export function registerMetadataRoutes(app: OpenAPIHono<AppEnv>, server: AuthorizationServer): void {
  app.get("/.well-known/oauth-authorization-server", (c) => {
    c.header("access-control-allow-origin", "*");
    c.header("cache-control", "public, max-age=300");
    return c.json(authorizationServerMetadata(server.issuerOf()));
  });

  app.get("/oauth/jwks", async (c) => {
    c.header("access-control-allow-origin", "*");
    c.header("cache-control", "public, max-age=300");
    return c.json(await server.oauth.signer.publicJwks());
  });
}
