import type { Logger } from "@mcpgw/core";

/** Who is calling: the admin token, or a client key scoped to server ids (null: every server). */
export type Principal = { kind: "admin" } | { kind: "key"; keyId: string; serverIds: string[] | null };

/** Hono context variables set by the app's middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    principal: Principal;
  };
}
