import type { KeyRateLimit } from "@mcpgw/aws";
import type { Logger } from "@mcpgw/core";

/**
 * Who is calling: the admin token, a client key scoped to server ids (null: every server), or — on the
 * MCP endpoints only — a user signed in through OAuth, scoped by their access token's `servers`.
 */
export type Principal =
  | { kind: "admin" }
  | {
      kind: "key";
      keyId: string;
      serverIds: string[] | null;
      owner?: string | undefined;
      rateLimit?: KeyRateLimit | null;
    }
  | { kind: "user"; sub: string; serverIds: string[] | null };

/** Hono context variables set by the app's middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    principal: Principal;
  };
}
