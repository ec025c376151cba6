import { z } from "zod";
import { issueMessage, type RawIssue } from "./issue-messages";

/**
 * User-visible errors: a stable dotted code with its HTTP status, a human title and its JSON-RPC code
 * — one table read by the problem+json renderer (REST) and the MCP endpoints alike. Everything else
 * (infrastructure faults) is a plain Error with a cause.
 */

/** JSON-RPC 2.0 error codes (the spec's; MCP uses the same). */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined (the spec's server-error range): too many requests; retry later. */
  RATE_LIMITED: -32029,
} as const;
const { PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, INTERNAL_ERROR, RATE_LIMITED } = RPC;

/** Every user-visible error code: its HTTP status, title and JSON-RPC code. */
export const ERROR_CODES = {
  "request.invalid": [400, "Invalid request", INVALID_PARAMS],
  "request.malformed_json": [400, "Malformed JSON", PARSE_ERROR],
  "request.too_large": [413, "Request body too large", INVALID_REQUEST],
  "request.unsupported_media_type": [415, "Unsupported media type", INVALID_REQUEST],
  "request.too_deep": [400, "Request nested too deeply", INVALID_PARAMS],
  "request.precondition_failed": [412, "Precondition failed", INVALID_REQUEST],
  "request.not_found": [404, "Not found", INVALID_PARAMS],
  "request.method_not_allowed": [405, "Method not allowed", INVALID_REQUEST],
  "auth.unauthorized": [401, "Unauthorized", INVALID_REQUEST],
  "auth.forbidden": [403, "Forbidden", INVALID_REQUEST],
  "auth.invalid_token": [401, "Invalid access token", INVALID_REQUEST],
  "auth.insufficient_scope": [403, "Insufficient scope", INVALID_REQUEST],
  "auth.csrf_failed": [403, "Missing or wrong CSRF token", INVALID_REQUEST],
  "auth.owner_required": [409, "Key has no owner", INVALID_REQUEST],
  rate_limited: [429, "Too many requests", RATE_LIMITED],
  "server.invalid": [400, "Invalid server configuration", INVALID_PARAMS],
  "server.url_forbidden": [400, "Forbidden upstream URL", INVALID_PARAMS],
  "server.credentials_origin_changed": [400, "Credentials would go to a new origin", INVALID_PARAMS],
  "server.not_found": [404, "Server not found", INVALID_PARAMS],
  "server.name_taken": [409, "Server name taken", INVALID_REQUEST],
  "server.version_conflict": [409, "Server changed concurrently", INVALID_REQUEST],
  "server.unavailable": [409, "Server unavailable", INVALID_PARAMS],
  "server.secrets_unreadable": [409, "Stored secrets cannot be opened", INTERNAL_ERROR],
  "server.config_unreadable": [409, "Stored config is unreadable", INVALID_REQUEST],
  "server.not_oauth": [409, "Server does not sign in with OAuth", INVALID_REQUEST],
  "server.no_authorize_step": [409, "Server needs no authorization step", INVALID_REQUEST],
  "import.invalid_document": [400, "Invalid .mcp.json document", INVALID_PARAMS],
  "import.no_servers": [400, "No servers to import", INVALID_PARAMS],
  "import.invalid_entry": [400, "Invalid server entry", INVALID_PARAMS],
  "import.name_conflict": [409, "Server names already taken", INVALID_REQUEST],
  "secret.not_found": [404, "Secret not found", INVALID_PARAMS],
  "key.unknown_server": [400, "Unknown server in key scope", INVALID_PARAMS],
  "access.unknown_server": [404, "Unknown server in access mapping", INVALID_PARAMS],
  "key.unknown_toolset": [400, "Unknown tool set in key scope", INVALID_PARAMS],
  "access.unknown_toolset": [404, "Unknown tool set in access mapping", INVALID_PARAMS],
  "toolset.not_found": [404, "Tool set not found", INVALID_PARAMS],
  "toolset.exists": [409, "Tool set exists", INVALID_REQUEST],
  "toolset.in_use": [409, "Tool set in use", INVALID_REQUEST],
  "toolset.unknown_server": [400, "Unknown server in tool set", INVALID_PARAMS],
  "toolset.invalid": [400, "Invalid tool set", INVALID_PARAMS],
  "thread.worktree_forbidden": [400, "Worktree outside the allowed base", INVALID_PARAMS],
  "thread.worktree_missing": [400, "Worktree missing or unreachable", INVALID_PARAMS],
  "tool.invalid_name": [400, "Invalid tool name", INVALID_PARAMS],
  "tool.not_found": [404, "Tool not found", INVALID_PARAMS],
  "tool.input_required": [409, "Tool needs input", INVALID_REQUEST],
  "tool.definition_changed": [409, "Tool definition changed; awaiting approval", INVALID_REQUEST],
  "change.not_found": [404, "Change not found", INVALID_PARAMS],
  "tool.forbidden": [403, "Tool forbidden", INVALID_REQUEST],
  "mcp.round_expired": [400, "Input round expired", INVALID_PARAMS],
  "upstream.unreachable": [502, "Upstream unreachable", INTERNAL_ERROR],
  "upstream.timeout": [504, "Upstream timed out", INTERNAL_ERROR],
  "upstream.error": [502, "Upstream answered with an error", INTERNAL_ERROR],
  "upstream.response_too_large": [502, "Upstream response too large", INTERNAL_ERROR],
  "upstream.authorization_required": [403, "Authorize at the upstream first", INVALID_REQUEST],
  "upstream.runner_lost": [503, "The stdio runner serving the call was lost; retry", INTERNAL_ERROR],
  "runner.not_owner": [421, "Another runner serves this instance", INTERNAL_ERROR],
  "store.unavailable": [503, "Store unavailable", INTERNAL_ERROR],
  "service.not_ready": [503, "Not ready", INTERNAL_ERROR],
  internal: [500, "Internal error", INTERNAL_ERROR],
} as const satisfies Record<string, readonly [number, string, number]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A problem the caller can act on; `extra` fields are added to the problem+json body. */
export class AppError extends Error {
  override readonly name = "AppError";
  readonly status: number;
  readonly title: string;
  /** The JSON-RPC error code this problem carries on the MCP endpoints. */
  readonly rpcCode: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    [this.status, this.title, this.rpcCode] = ERROR_CODES[code];
  }
}

/**
 * One thing wrong with a request, as a problem's `errors` lists it: where (`field`, a dotted path into
 * the body — `headers.X-Key`, `timeoutSeconds`; "" for the body as a whole) and a sentence a person
 * can act on (`message`). The problem's `code` stays the one for machines.
 */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A zod issue as far as {@link describeIssues} reads it (a bad record key nests the key's own issues). */
interface Issue {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: readonly string[];
  issues?: ReadonlyArray<{ message: string }>;
}

// Every schema without a message of its own speaks in words (issue-messages.ts), whoever parses.
z.config({ customError: (issue) => issueMessage(issue as RawIssue) });

/**
 * Issues from a zod error, one per field: an unknown field is named as a field of its own, and a
 * record's bad key says what is wrong with it (`headers.Host`: "The name is one the gateway … sets
 * itself."), not zod's "Invalid key in record".
 */
export function describeIssues(issues: ReadonlyArray<Issue>): FieldProblem[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys" && issue.keys?.length)
      return issue.keys.map((key) => ({
        field: [...path, key].join("."),
        message: "Not a field this request takes.",
      }));
    const messages =
      issue.code === "invalid_key" && issue.issues?.length
        ? issue.issues.map((inner) => `the name ${lowerFirst(inner.message)}`)
        : [issue.message];
    return messages.map((message) => ({ field: path.join("."), message: asSentence(message) }));
  });
}

/** `text` with a capitalised first word ("Must …") in lower case, to follow words of its own. */
function lowerFirst(text: string): string {
  return /^[A-Z][a-z]+\b/.test(text) ? `${text[0]?.toLowerCase()}${text.slice(1)}` : text;
}

/** `problem` as one line: `field: message`, or the message alone when it is about the whole body. */
export function problemLine(problem: FieldProblem): string {
  return problem.field ? `${problem.field}: ${problem.message}` : problem.message;
}

/** `problems` as one text, each a sentence of its own: `url: Must be a URL. name: Required.` */
export function problemLines(problems: FieldProblem[]): string {
  return problems.map(problemLine).join(" ");
}

/** An AppError listing `problems` (each in `errors`, all in its detail). */
export function fieldsRefused(code: ErrorCode, problems: FieldProblem[]): AppError {
  return new AppError(code, problemLines(problems), { errors: problems });
}

/**
 * `text` as a sentence: a first word in lower case capitalised ("must not be empty" → "Must not be
 * empty."), a name left as it is ("clientSecret needs a clientId."), and a full stop unless it has one.
 */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  const capital = /^[a-z]+\b/.test(trimmed) ? `${trimmed[0]?.toUpperCase()}${trimmed.slice(1)}` : trimmed;
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
