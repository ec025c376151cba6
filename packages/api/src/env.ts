import type { KeyRateLimit } from "@mcpgw/aws";
import type { Logger, ToolPolicy } from "@mcpgw/core";
import type { ToolGrant } from "./gateway/tool-access";

/**
 * Who is calling: the admin token, a client key scoped to server ids (null: every server), or — on the
 * MCP endpoints only — a user signed in through OAuth, scoped by their access token's `servers` (and,
 * when their mappings name tool sets or policies, its `grants`: one per mapping).
 */
export type Principal =
  /** `via: "console"`: through the console's session (`sub`: who signed in at the provider, if so). */
  | { kind: "admin"; via?: "console"; sub?: string }
  | {
      kind: "key";
      keyId: string;
      /** The key's name (for the audit trail). */
      keyName?: string | undefined;
      serverIds: string[] | null;
      owner?: string | undefined;
      rateLimit?: KeyRateLimit | null;
      toolsets?: string[] | undefined;
      toolPolicy?: ToolPolicy | undefined;
    }
  | { kind: "user"; sub: string; serverIds: string[] | null; grants?: ToolGrant[] | undefined };

/** Hono context variables set by the app's middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    logger: Logger;
    principal: Principal;
  };
}
