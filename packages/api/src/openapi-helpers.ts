import { createRoute, type RouteConfig, type z } from "@hono/zod-openapi";
import { Problem } from "./views";

/** The bearer-token security requirement of authenticated routes. */
export const security = [{ bearer: [] }];

/** Response headers a route documents (e.g. `ETag`). */
type Headers = Record<string, { description: string; schema: { type: "string" } }>;

/** A JSON response entry for a route's `responses`. */
export const json = <T extends z.ZodType>(schema: T, description: string, headers?: Headers) => ({
  content: { "application/json": { schema } },
  description,
  ...(headers ? { headers } : {}),
});

/** The `ETag` header of a server: its version, quoted (send it back as If-Match). */
export const etag: Headers = {
  ETag: { description: 'The server\'s version, e.g. `"3"` (for If-Match)', schema: { type: "string" } },
};

/** What each problem status means, wherever it is answered. */
const PROBLEMS: Record<number, string> = {
  400: "Invalid request: a parameter or the body breaks the schema (`request.invalid`, `request.malformed_json`) or a rule of the operation (its `code` says which)",
  401: "Missing or invalid bearer token (`auth.unauthorized`)",
  403: "A client API key on an admin route, or a key on a thread of another (`auth.forbidden`)",
  404: "Not found (`server.not_found`, `tool.not_found`, `secret.not_found`, `request.not_found`, `access.unknown_server`)",
  409: "Conflicts with the current state (`server.name_taken`, `server.version_conflict`, `server.unavailable`, `server.not_oauth`, `server.no_authorize_step`, `server.config_unreadable`, `import.name_conflict`)",
  412: "If-Match names another version (`request.precondition_failed`)",
  413: "The request body exceeds 1 MiB (`request.too_large`)",
  415: "A body sent as anything but `application/json` (`request.unsupported_media_type`): send `Content-Type: application/json`",
  429: "Too many wrong tokens from this address (`rate_limited`; `Retry-After` says when to try again)",
  502: "The upstream or the stdio runner failed (`upstream.unreachable`, `upstream.error`, `upstream.response_too_large`)",
  503: "The store cannot be reached just now (`store.unavailable`; `Retry-After` says when to try again)",
  504: "The upstream did not answer in time (`upstream.timeout`)",
};

/** problem+json response entries for these statuses. */
export const problems = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        content: { "application/problem+json": { schema: Problem } },
        description: PROBLEMS[status] ?? "Problem",
      },
    ]),
  );

/**
 * A JSON request body, required unless `optional`: an optional one may be left out (no body and no
 * Content-Type), and the handler then gets `{}` — unvalidated, so it must read it with defaults.
 */
export const jsonBody = <T extends z.ZodType>(schema: T, { optional = false } = {}) => ({
  body: { content: { "application/json": { schema } }, required: !optional },
});

/** Methods whose requests may carry a body, so the 1 MiB body limit (413) applies to them. */
const BODY_METHODS = new Set(["post", "put", "patch", "delete"]);

/**
 * The problems any authenticated route may answer, from its shape: 401 and 429 (a source's wrong
 * tokens throttled) and 503 (the store unavailable) always; 400 when it reads parameters, headers or
 * a body; 413 where a body may come; 415 where it takes a JSON body. (Its route group adds its guard's.) No route documents a 500: one is a bug, never a contract.
 */
export function commonProblems(config: Pick<RouteConfig, "method" | "path" | "request">): number[] {
  const { request } = config;
  const reads = Boolean(request?.params || request?.query || request?.headers || request?.body);
  const body = BODY_METHODS.has(config.method) ? [413, ...(request?.body ? [415] : [])] : [];
  return [...(reads ? [400] : []), 401, ...body, 429, 503];
}

/**
 * An authenticated route: `createRoute` with the bearer security requirement and the common problems
 * (`commonProblems`) added to the responses it names, so a new route documents them by default.
 */
export function route<const R extends RouteConfig>(config: R): R {
  return createRoute({
    security,
    ...config,
    responses: { ...problems(...commonProblems(config)), ...config.responses },
  }) as R;
}
