/**
 * Access tokens made to order for the resource server's refusal tests: the gateway's format (header
 * `{alg: "ES256", typ: "at+jwt", kid}` and its claims), any header field or claim overridden — what
 * the authorization server itself never issues (expired, another issuer, another audience…).
 */
import { randomUUID } from "node:crypto";
import type { TokenSigner } from "@mcpgw/aws";

/** The claims of a test token: everything the contract names, any of them overridable. */
export interface TestClaims {
  iss: string;
  aud: string | string[];
  sub?: string;
  client_id?: string;
  scope?: string;
  servers?: string[] | null;
  jti?: string;
  iat?: number;
  exp?: number;
  [extra: string]: unknown;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A signed access token; `header` overrides (or, set undefined, drops) header fields. */
export async function mintTestToken(
  signer: TokenSigner,
  claims: TestClaims,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const body = {
    sub: "alice",
    client_id: "test-client",
    scope: "mcp",
    servers: null,
    jti: randomUUID(),
    iat: now,
    exp: now + 600,
    ...claims,
  };
  const head = { alg: "ES256", typ: "at+jwt", kid: await signer.kid(), ...header };
  const input = `${b64(head)}.${b64(body)}`;
  return `${input}.${(await signer.sign(Buffer.from(input))).toString("base64url")}`;
}
