/**
 * The token endpoint (authorization code + PKCE S256, refresh-token rotation) and revocation
 * (RFC 7009). Access tokens are ES256 JWTs for one exact resource.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type GrantSubject, hashOAuthSecret, nowSeconds } from "@mcpgw/aws";
import { errorFields } from "@mcpgw/core";
import type { AppEnv } from "../env";
import { type AuthorizationServer, formOf, noStore, secret, TokenError } from "./http";
import { ACCESS_TOKEN_TTL_SECONDS, MCP_SCOPE, mintAccessToken } from "./jwt";
import { verifierMatches } from "./pkce";
import { type Reach, reachesNothing, reachFits } from "./resource-check";

/** How long a refresh family lives in all. */
const REFRESH_FAMILY_SECONDS = 30 * 24 * 3600;

/** Serves `POST /oauth/token` and `POST /oauth/revoke`. */
export function registerTokenRoutes(app: OpenAPIHono<AppEnv>, server: AuthorizationServer): void {
  const grants = new Grants(server);

  app.post("/oauth/token", async (c) => {
    noStore(c);
    try {
      const form = await formOf(c);
      const grantType = form.get("grant_type");
      const clientId = form.get("client_id");
      if (!clientId) throw new TokenError("invalid_client", "client_id is required (public clients).", 401);
      const tokens =
        grantType === "authorization_code"
          ? await grants.exchangeCode(form, clientId)
          : grantType === "refresh_token"
            ? await grants.refresh(form, clientId)
            : undefined;
      if (!tokens)
        throw new TokenError(
          "unsupported_grant_type",
          "grant_type must be authorization_code or refresh_token.",
        );
      await server.clients.used(clientId);
      return c.json(tokens, 200);
    } catch (error) {
      if (!(error instanceof TokenError)) {
        c.get("logger").error("token endpoint failed", errorFields(error));
        return c.json({ error: "server_error", error_description: "The token could not be issued." }, 500);
      }
      if (error.status === 401) c.header("www-authenticate", 'Basic realm="oauth"');
      return c.json({ error: error.error, error_description: error.description }, error.status as 400);
    }
  });

  app.post("/oauth/revoke", async (c) => {
    noStore(c);
    const form = await formOf(c).catch(() => new URLSearchParams());
    const token = form.get("token");
    if (!token) return c.json({ error: "invalid_request", error_description: "token is required." }, 400);
    // RFC 7009: an unknown token, or another client's, is answered 200 all the same.
    const found = await server.store.oauth.refresh(hashOAuthSecret(token));
    if (found && found.grant.clientId === form.get("client_id")) {
      await server.store.oauth.revokeFamily(found.grant.familyId);
      c.get("logger").info("oauth refresh family revoked", { clientId: found.grant.clientId });
    }
    return c.body(null, 200);
  });
}

/**
 * Refuses a token whose reach — its mappings' servers and tool policies together — would not fit in
 * it (fails closed: a token past 8 KiB would be refused by every request anyway).
 */
function assertGrantsFit(reach: Reach): void {
  if (!reachFits(reach))
    throw new TokenError(
      "invalid_grant",
      "The user's access mappings (their servers and tool policies) are too large for a token.",
    );
}

/** The two grants of the token endpoint; a refusal is a TokenError. */
class Grants {
  constructor(private readonly server: AuthorizationServer) {}

  /** authorization_code: the code once, for its client, redirect URI, resource and verifier. */
  async exchangeCode(form: URLSearchParams, clientId: string) {
    const { store, resources } = this.server;
    const code = form.get("code");
    const verifier = form.get("code_verifier");
    if (!code || !verifier) throw new TokenError("invalid_request", "code and code_verifier are required.");
    const used = await store.oauth.consumeCode(hashOAuthSecret(code));
    if (!used) throw new TokenError("invalid_grant", "The code is unknown or expired.");
    const { code: record, firstUse } = used;
    if (!firstUse) {
      // A replayed code: what it issued may be in the wrong hands.
      await store.oauth.revokeFamily(record.familyId);
      throw new TokenError("invalid_grant", "The code was already used.");
    }
    if (record.clientId !== clientId)
      throw new TokenError("invalid_grant", "The code was issued to another client.");
    if (form.get("redirect_uri") !== record.redirectUri) {
      throw new TokenError("invalid_grant", "redirect_uri does not match the authorization request.");
    }
    const resource = form.get("resource");
    if (resource !== null && resource !== record.resource) {
      throw new TokenError("invalid_target", "resource does not match the authorization request.");
    }
    if (!verifierMatches(verifier, record.codeChallenge)) {
      throw new TokenError("invalid_grant", "code_verifier does not match the code challenge.");
    }
    const reach = await resources.serversOf(record, record.resource);
    if (reachesNothing(reach)) {
      throw new TokenError("invalid_grant", "The user may no longer reach any MCP server.");
    }
    assertGrantsFit(reach);
    let refreshToken: string | undefined;
    if (record.refreshable) {
      refreshToken = secret("mgwr_");
      await store.oauth.issueRefresh(hashOAuthSecret(refreshToken), {
        familyId: record.familyId,
        clientId,
        resource: record.resource,
        scope: record.scope,
        sub: record.sub,
        groups: record.groups,
        expiresAt: nowSeconds() + REFRESH_FAMILY_SECONDS,
      });
    }
    return this.tokenResponse(clientId, record.resource, record, reach, refreshToken);
  }

  /** refresh_token: rotated on every use; a reused token revokes its family. */
  async refresh(form: URLSearchParams, clientId: string) {
    const { store, resources } = this.server;
    const token = form.get("refresh_token");
    if (!token) throw new TokenError("invalid_request", "refresh_token is required.");
    const hash = hashOAuthSecret(token);
    const found = await store.oauth.refresh(hash);
    if (!found || found.grant.clientId !== clientId) {
      throw new TokenError("invalid_grant", "The refresh token is unknown, expired or another client's.");
    }
    const resource = form.get("resource");
    if (resource !== null && resource !== found.grant.resource) {
      throw new TokenError("invalid_target", "resource does not match the grant.");
    }
    const scope = form.get("scope");
    if (scope?.split(" ").some((s) => s && s !== MCP_SCOPE)) {
      throw new TokenError("invalid_scope", "The only scope is mcp.");
    }
    const next = secret("mgwr_");
    const rotated = await store.oauth.rotateRefresh(hash, hashOAuthSecret(next));
    if (rotated.outcome !== "rotated") {
      if (rotated.outcome === "reused") {
        this.server.logger.warn("oauth refresh token reused: family revoked", { clientId });
      }
      throw new TokenError("invalid_grant", "The refresh token was already used or revoked.");
    }
    const grant = rotated.previous;
    const reach = await resources.serversOf(grant, grant.resource);
    if (reachesNothing(reach)) {
      await store.oauth.revokeFamily(grant.familyId);
      throw new TokenError("invalid_grant", "The user may no longer reach any MCP server.");
    }
    assertGrantsFit(reach);
    return this.tokenResponse(clientId, grant.resource, grant, reach, next);
  }

  private async tokenResponse(
    clientId: string,
    resource: string,
    subject: GrantSubject,
    reach: Reach,
    refreshToken: string | undefined,
  ) {
    const accessToken = await mintAccessToken(this.server.oauth.signer, {
      iss: this.server.issuerOf(),
      aud: resource,
      sub: subject.sub,
      client_id: clientId,
      scope: MCP_SCOPE,
      servers: reach.ids,
      ...(reach.grants ? { grants: reach.grants } : {}),
    });
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      scope: MCP_SCOPE,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    };
  }
}
