/**
 * `/mcp` and `/mcp/{server}` as OAuth protected resources (RFC 9728, MCP authorization): the access
 * tokens they take, the challenges they answer (RFC 6750 §3) and their metadata documents. Each
 * endpoint is a resource of its own — `${issuer}/mcp`, `${issuer}/mcp/{server}` — and a token is good
 * at exactly the one it was issued for.
 */
import type { JsonWebKey } from "node:crypto";
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { API_KEY_PREFIX } from "@mcpgw/aws";
import { AppError, type ErrorCode, problemResponse } from "@mcpgw/core";
import type { Context, Next } from "hono";
import type { AppEnv } from "../env";
import { json, problems } from "../openapi-helpers";
import type { TokenSigner } from "./signer";
import { AccessTokenError, verifyAccessToken } from "./verify";

/** The gateway's OAuth settings (OAUTH_ISSUER); absent, the MCP endpoints take API keys only. */
export interface OAuthDeps {
  /** The gateway's public origin, no trailing slash: the tokens' `iss` and the resources' prefix. */
  issuer: string;
  signer: TokenSigner;
  devSignIn?: boolean;
}

/** The one scope of the MCP endpoints. */
export const MCP_SCOPE = "mcp";

/** The resource identifier of `/mcp` (no server) or `/mcp/{server}`. */
export function resourceOf(issuer: string, server?: string): string {
  return server === undefined ? `${issuer}/mcp` : `${issuer}/mcp/${server}`;
}

/** Where the resource's metadata is (RFC 9728 §3.1: the well-known path inserted before the resource's). */
export function resourceMetadataUrl(issuer: string, server?: string): string {
  return `${issuer}/.well-known/oauth-protected-resource/mcp${server === undefined ? "" : `/${server}`}`;
}

/** The server an MCP request's path names (`/mcp/{server}`), undefined for `/mcp`. */
function serverOfPath(path: string): string | undefined {
  return path.startsWith("/mcp/") ? path.slice("/mcp/".length) : undefined;
}

/**
 * The `WWW-Authenticate` value of a refusal at the resource (RFC 6750 §3, RFC 9728 §5.1): no token →
 * where the metadata is and the scope; a bad token → also `invalid_token` and why; a token that does
 * not cover the server → `insufficient_scope`. Not the MCP SDK's `bearerAuthChallengeResponse`: it puts
 * `error="invalid_token"` on a request with no token, which RFC 6750 §3.1 says not to do.
 */
export function challenge(
  issuer: string,
  server: string | undefined,
  error?: { error: "invalid_token"; description: string } | { error: "insufficient_scope" },
): string {
  const metadata = `resource_metadata="${resourceMetadataUrl(issuer, server)}"`;
  const scope = `scope="${MCP_SCOPE}"`;
  if (error?.error === "insufficient_scope")
    return `Bearer error="insufficient_scope", ${scope}, ${metadata}`;
  if (!error) return `Bearer ${metadata}, ${scope}`;
  // Fixed reasons only; never a quote or a backslash (nor another parameter's name: clients match loosely).
  const description = error.description.replace(/["\\]/g, "");
  return `Bearer ${metadata}, ${scope}, error="invalid_token", error_description="${description}"`;
}

/** A problem+json refusal carrying the resource's challenge instead of the plain one. */
function refusal(c: Context, code: ErrorCode, detail: string, authenticate: string): Response {
  const response = problemResponse(new AppError(code, detail), c.req.path);
  response.headers.set("www-authenticate", authenticate);
  return response;
}

/** 403 for a user whose token does not cover `server` (one outside the servers granted to them). */
export function insufficientScope(c: Context, issuer: string, server: string | undefined): Response {
  return refusal(
    c,
    "auth.insufficient_scope",
    `The access token does not grant access to ${server === undefined ? "this endpoint" : `server '${server}'`}.`,
    challenge(issuer, server, { error: "insufficient_scope" }),
  );
}

/**
 * The access-token half of the MCP endpoints' authentication, after the admin token and API keys:
 * a valid token for this request's resource makes the caller a user; no token, or any other, is 401
 * with the resource's challenge. The signer's public keys are read once per process.
 */
export class ProtectedResource {
  private jwks: Promise<{ keys: JsonWebKey[] }> | undefined;

  constructor(private readonly oauth: Pick<OAuthDeps, "issuer" | "signer">) {}

  /** Authenticates `token` (neither the admin token nor a live key) as a user, or answers the refusal. */
  async authenticate(
    c: Context<AppEnv>,
    token: string | undefined,
    next: Next,
  ): Promise<Response | undefined> {
    const { issuer } = this.oauth;
    const server = serverOfPath(c.req.path);
    if (!token) {
      return refusal(c, "auth.unauthorized", "Missing bearer token.", challenge(issuer, server));
    }
    let claims: Awaited<ReturnType<typeof verifyAccessToken>>;
    try {
      if (token.startsWith(API_KEY_PREFIX)) throw new AccessTokenError("unknown or revoked API key");
      claims = await verifyAccessToken(token, {
        issuer,
        resource: resourceOf(issuer, server),
        jwks: await this.keys(),
      });
    } catch (error) {
      if (!(error instanceof AccessTokenError)) throw error;
      const description = error.reason;
      return refusal(
        c,
        "auth.invalid_token",
        `The access token is not valid here: ${description}.`,
        challenge(issuer, server, { error: "invalid_token", description }),
      );
    }
    if (!claims.scope.split(" ").includes(MCP_SCOPE)) return insufficientScope(c, issuer, server);
    c.set("principal", {
      kind: "user",
      sub: claims.sub,
      serverIds: claims.servers,
      ...(claims.grants ? { grants: claims.grants } : {}),
    });
    await next();
    return undefined;
  }

  /** The signer's public keys: read on first use, then kept (a failed read is retried next time). */
  private keys(): Promise<{ keys: JsonWebKey[] }> {
    this.jwks ??= this.oauth.signer.publicJwks().catch((error: unknown) => {
      this.jwks = undefined;
      throw error;
    });
    return this.jwks;
  }
}

const ProtectedResourceMetadata = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_name: z.string(),
  })
  .openapi("ProtectedResourceMetadata");

/**
 * The protected resource metadata (RFC 9728) of `/mcp` and of each `/mcp/{server}`: public, CORS-open
 * JSON (a browser-based client reads it before it has a token); an unknown server name is 404.
 */
export function registerProtectedResourceRoutes(
  app: OpenAPIHono<AppEnv>,
  issuer: string,
  serverExists: (name: string) => Promise<boolean>,
): void {
  const metadata = (server: string | undefined) => ({
    resource: resourceOf(issuer, server),
    authorization_servers: [issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: server === undefined ? "MCP Gateway (every server)" : `MCP Gateway: ${server}`,
  });
  const cors = { "access-control-allow-origin": "*", "cache-control": "public, max-age=300" };
  app.openapi(
    createRoute({
      method: "get",
      path: "/.well-known/oauth-protected-resource/mcp",
      tags: ["oauth"],
      summary: "Protected resource metadata (RFC 9728) of /mcp",
      responses: { 200: json(ProtectedResourceMetadata, "Metadata") },
    }),
    (c) => c.json(metadata(undefined), 200, cors),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/.well-known/oauth-protected-resource/mcp/{server}",
      tags: ["oauth"],
      summary: "Protected resource metadata (RFC 9728) of /mcp/{server}",
      // Any name: one no server has (too long to be a server name, say) has no metadata, so 404.
      request: { params: z.object({ server: z.string() }) },
      responses: {
        200: json(ProtectedResourceMetadata, "Metadata"),
        ...problems(404),
      },
    }),
    async (c) => {
      const { server } = c.req.valid("param");
      if (!(await serverExists(server))) {
        const response = problemResponse(
          new AppError("server.not_found", `No server named '${server}'.`),
          c.req.path,
        );
        response.headers.set("access-control-allow-origin", "*");
        return response as never;
      }
      return c.json(metadata(server), 200, cors);
    },
  );
}
