import type { ToolCallResult } from "@mcpgw/upstream";
import type { AuthorizationLink } from "../upstream-authorization";

/**
 * A `per_user` server's caller has no connection of their own yet (or the upstream refused their
 * token): the link where they authorize it. The REST API answers it as a tool result, the MCP
 * endpoints as a URL-mode elicitation where the client takes one.
 */
export class AuthorizationNeeded extends Error {
  override readonly name = "AuthorizationNeeded";
  constructor(
    readonly server: string,
    readonly link: AuthorizationLink,
  ) {
    super(
      `Server '${server}' needs you to authorize the gateway with your own account first: open ${link.authorizationUrl} (good until ${link.expiresAt}), then call again.`,
    );
  }
}

/** What a caller who must authorize first gets as a tool result (isError, with the link). */
export function authorizationNeededResult(needed: AuthorizationNeeded): ToolCallResult {
  return {
    content: [{ type: "text", text: needed.message }],
    structuredContent: {
      authorizationRequired: true,
      authorizationUrl: needed.link.authorizationUrl,
      expiresAt: needed.link.expiresAt,
    },
    isError: true,
  };
}
