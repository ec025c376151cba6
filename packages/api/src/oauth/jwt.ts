/** Access tokens: RFC 9068 JWTs signed ES256 by the gateway's {@link TokenSigner}. */
import { randomUUID } from "node:crypto";
import type { ToolGrant } from "../gateway/tool-access";
import type { TokenSigner } from "./signer";

/** How long an access token lives: 10 minutes (revocation acts on refresh tokens only). */
export const ACCESS_TOKEN_TTL_SECONDS = 600;

/** The one scope the gateway grants. */
export const MCP_SCOPE = "mcp";

/** The claims of a gateway access token. */
export interface AccessTokenClaims {
  iss: string;
  /** The exact resource the token is for: `${iss}/mcp` or `${iss}/mcp/{server}`. */
  aud: string;
  sub: string;
  client_id: string;
  scope: string;
  /** Ids of the servers the user may reach; null: every server. */
  servers: string[] | null;
  /** A grant per access mapping, when one names tool sets or a tool policy (see ToolGrant). */
  grants?: ToolGrant[];
  jti: string;
  iat: number;
  exp: number;
}

const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * A signed access token for `claims` (`jti`, `iat` and `exp` filled in when absent: a fresh id, now,
 * now + {@link ACCESS_TOKEN_TTL_SECONDS}). Header `{alg: "ES256", typ: "at+jwt", kid}`.
 */
export async function mintAccessToken(
  signer: TokenSigner,
  claims: Omit<AccessTokenClaims, "jti" | "iat" | "exp"> &
    Partial<Pick<AccessTokenClaims, "jti" | "iat" | "exp">>,
): Promise<string> {
  const iat = claims.iat ?? Math.floor(Date.now() / 1000);
  const payload: AccessTokenClaims = {
    ...claims,
    jti: claims.jti ?? randomUUID(),
    iat,
    exp: claims.exp ?? iat + ACCESS_TOKEN_TTL_SECONDS,
  };
  const signingInput = `${segment({ alg: "ES256", typ: "at+jwt", kid: await signer.kid() })}.${segment(payload)}`;
  const signature = await signer.sign(Buffer.from(signingInput));
  return `${signingInput}.${signature.toString("base64url")}`;
}
