import type { Logger } from "@mcpgw/core";

/** Hono context variables set by the app's middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    /** Who is calling: the admin token, or (data plane) a client key. */
    principal: { kind: "admin" } | { kind: "key"; keyId: string; servers: string[] | null };
  };
}
