/**
 * User-visible errors: a stable dotted code, an HTTP status and a human title, rendered as
 * problem+json by the API. Everything else (infrastructure faults) is a plain Error with a cause.
 */

/** Every user-visible error code, with its HTTP status and title. */
export const ERROR_CODES = {
  "request.invalid": [400, "Invalid request"],
  "request.malformed_json": [400, "Malformed JSON"],
  "request.too_large": [413, "Request body too large"],
  "request.too_deep": [400, "Request nested too deeply"],
  "request.precondition_failed": [412, "Precondition failed"],
  "request.not_found": [404, "Not found"],
  "auth.unauthorized": [401, "Unauthorized"],
  "auth.forbidden": [403, "Forbidden"],
  "server.invalid": [400, "Invalid server configuration"],
  "server.url_forbidden": [400, "Forbidden upstream URL"],
  "server.credentials_origin_changed": [400, "Credentials would go to a new origin"],
  "server.not_found": [404, "Server not found"],
  "server.name_taken": [409, "Server name taken"],
  "server.version_conflict": [409, "Server changed concurrently"],
  "server.unavailable": [409, "Server unavailable"],
  "import.invalid_document": [400, "Invalid .mcp.json document"],
  "import.no_servers": [400, "No servers to import"],
  "import.invalid_entry": [400, "Invalid server entry"],
  "import.name_conflict": [409, "Server names already taken"],
  "secret.not_found": [404, "Secret not found"],
  "key.unknown_server": [400, "Unknown server in key scope"],
  "thread.worktree_forbidden": [400, "Worktree outside the allowed base"],
  "thread.worktree_missing": [400, "Worktree missing or unreachable"],
  "tool.invalid_name": [400, "Invalid tool name"],
  "tool.not_found": [404, "Tool not found"],
  "upstream.unreachable": [502, "Upstream unreachable"],
  "upstream.timeout": [504, "Upstream timed out"],
  "upstream.error": [502, "Upstream answered with an error"],
  "upstream.response_too_large": [502, "Upstream response too large"],
  internal: [500, "Internal error"],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A problem the caller can act on; `extra` fields are added to the problem+json body. */
export class AppError extends Error {
  override readonly name = "AppError";
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    [this.status, this.title] = ERROR_CODES[code];
  }
}

/** Issues from a zod error as `path: message` lines, for a problem's detail. */
export function describeIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string[] {
  return issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}
