import { storeUnavailable } from "@mcpgw/aws";
import { AppError, describeBytes, jsonDepth, MAX_JSON_DEPTH, qualifyToolName, whenSent } from "@mcpgw/core";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { insufficientScope } from "../oauth/resource";
import { type McpOriginPolicy, originGuard } from "../origin-guard";
import { problemOf } from "../problem";
import type { RouteGroup } from "../route-groups";
import { clientAddress } from "../throttle";
import { toolsetIndex } from "../toolsets";
import { auditRefused, callNote, mcpPlane } from "./call-audit";
import { inScope } from "./catalogue";
import type { GatewayDeps } from "./deps";
import type { RequestKind } from "./limits";
import type { McpEndpoints } from "./mcp-endpoint";
import { refusedResponse, rpcErrorResponse } from "./mcp-errors";
import { scopeOf } from "./routes";
import { parseToolMode, type ToolMode } from "./search-mode";
import { isComplete } from "./settle-stream";
import { threadOwner } from "./thread-access";

export { decodeCursor, encodeCursor, toMcpError } from "./mcp-errors";
export { MCP_PAGE_SIZE } from "./mcp-request";

const MAX_MCP_BODY_BYTES = 1024 * 1024;

/**
 * The MCP endpoints for clients: `/mcp` aggregates every server the caller's key may use (tools and
 * prompts as `<server>__<name>`, resources under gateway URIs); `/mcp/{server}` fronts one server
 * under its own names. Both protocol eras on each ({@link McpEndpoints}); the origin, auth, size and
 * depth checks come first. With OAuth on (`oauth`), a user's token for a server outside their servers
 * is 403 `insufficient_scope`; a key's is 404, as if there were no such server. `/mcp/sets/{name}`
 * serves a tool set's tools (those the caller may use); an unknown set is 404 `toolset.not_found`.
 */
export function registerMcpRoutes(
  group: RouteGroup,
  endpoints: McpEndpoints,
  policy: McpOriginPolicy = {},
  oauth?: { issuer: string },
): void {
  const origins = originGuard(policy);
  group.all("/mcp", origins, group.guard, (c) => serveMcp(c, endpoints, undefined, oauth));
  group.all("/mcp/:server", origins, group.guard, (c) =>
    serveMcp(c, endpoints, c.req.param("server"), oauth),
  );
  group.all("/mcp/sets/:name", origins, group.guard, async (c) => {
    const name = c.req.param("name");
    if (!(await toolsetIndex(endpoints.services.deps.store).named(name)))
      return problemOf(c, "toolset.not_found", `No tool set named '${name}'.`);
    return serveMcp(c, endpoints, undefined, oauth, name);
  });
}

async function serveMcp(
  c: Context<AppEnv>,
  endpoints: McpEndpoints,
  server: string | undefined,
  oauth: { issuer: string } | undefined,
  toolset?: string,
): Promise<Response> {
  const { directory } = endpoints.services.deps;
  const principal = c.get("principal");
  const scope = scopeOf(principal);
  let mode: ToolMode | undefined;
  try {
    mode = parseToolMode(c.req.query("mode"));
  } catch (error) {
    return problemOf(c, "request.invalid", (error as AppError).detail);
  }
  let entry: Awaited<ReturnType<typeof directory.snapshot>>["byName"] extends Map<string, infer E>
    ? E | undefined
    : never;
  if (server !== undefined) {
    entry = await directory.named(server);
    if (entry && !inScope(scope, entry.server.id) && principal.kind === "user" && oauth) {
      return insufficientScope(c, oauth.issuer, server);
    }
    if (!entry || !inScope(scope, entry.server.id)) {
      return problemOf(c, "server.not_found", `No server named '${server}'.`);
    }
  }
  let body: unknown;
  if (c.req.method === "POST") {
    const parsed = await readMcpBody(c.req.raw);
    if (parsed instanceof Response) return parsed;
    body = parsed.body;
    const down = await storeDown(endpoints, body);
    if (down) return down;
  }
  const principalKey = threadOwner(principal);
  const kind = requestKind(c.req.method, body);
  let release: () => void = () => {};
  try {
    if (endpoints.limits) release = await endpoints.limits.admit(principal, kind);
    const response = await endpoints.serve(
      c.req.raw,
      body,
      { principal, principalKey, scope, mode, source: clientAddress(c) },
      entry,
      toolset,
    );
    // In flight until its answer is all out: a stream (or a call still streaming) until its body ends.
    if (kind === "call" && isComplete(response)) {
      release();
      return response;
    }
    return whenSent(response, release, { everyBody: true });
  } catch (error) {
    release();
    if (error instanceof AppError && error.code === "rate_limited") {
      auditRefusedMcpCall(endpoints.services.deps, c, body, { server, toolset }, error.code);
      return refusedResponse(error, body);
    }
    throw error;
  }
}

/**
 * The directory cannot be read because the store is unavailable: the request's JSON-RPC error with
 * HTTP 503 and `Retry-After` (`data.code` `store.unavailable`), not an SDK handler's 200 or a 500.
 * Cheap: the directory answers from memory; once a refresh failed it serves no stale view, so a store
 * that is down shows here. A refresh slower than `maxAgeMs` (a bulk change) is not waited for — the
 * handlers' own reads say whether the store answers.
 */
async function storeDown(endpoints: McpEndpoints, body: unknown): Promise<Response | undefined> {
  const { directory } = endpoints.services.deps;
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, directory.maxAgeMs);
  });
  const snapshot = directory.snapshot();
  snapshot.catch(() => undefined);
  try {
    await Promise.race([snapshot, slow]);
    return undefined;
  } catch (error) {
    const unavailable = storeUnavailable(error);
    if (!unavailable) throw error;
    const { id } = (Array.isArray(body) ? {} : (body ?? {})) as { id?: unknown };
    return rpcErrorResponse(unavailable, typeof id === "string" || typeof id === "number" ? id : null, 503);
  } finally {
    clearTimeout(timer);
  }
}

/** A standing stream (a 2025 session's GET stream, a 2026 `subscriptions/listen`), or else a call. */
function requestKind(method: string, body: unknown): RequestKind {
  if (method === "GET") return "stream";
  return (body as { method?: unknown } | undefined)?.method === "subscriptions/listen" ? "stream" : "call";
}

/**
 * The request's JSON-RPC body, bounded before anything parses it for real: at most 1 MiB (else 413),
 * and tool-call arguments at most 64 levels deep (else 400 `request.too_deep`) — a hostile caller's
 * 10,000-level arguments never reach an upstream (or a recursive serialiser). Errors are JSON-RPC
 * error bodies with the gateway's code in `data.code`.
 */
async function readMcpBody(request: Request): Promise<{ body: unknown } | Response> {
  const text = await readBounded(request, MAX_MCP_BODY_BYTES);
  if (text === undefined) {
    return rpcErrorResponse(
      new AppError("request.too_large", `The request body exceeds ${describeBytes(MAX_MCP_BODY_BYTES)}.`),
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return rpcErrorResponse(
      new AppError("request.malformed_json", "Parse error: the body is not valid JSON."),
    );
  }
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params, id } = (message ?? {}) as { method?: unknown; params?: unknown; id?: unknown };
    const args =
      method === "tools/call" ? (params as { arguments?: unknown } | undefined)?.arguments : undefined;
    const tooDeep =
      jsonDepth(args) > MAX_JSON_DEPTH || jsonDepth(message, MAX_JSON_DEPTH + 8) > MAX_JSON_DEPTH + 8;
    if (tooDeep) {
      const error = new AppError(
        "request.too_deep",
        `Tool-call arguments nest deeper than ${MAX_JSON_DEPTH} levels.`,
        {
          limit: MAX_JSON_DEPTH,
        },
      );
      return rpcErrorResponse(error, typeof id === "string" || typeof id === "number" ? id : null);
    }
  }
  return { body };
}

/** The body as text, or undefined once it passes `limit` bytes (reading stops there). */
async function readBounded(request: Request, limit: number): Promise<string | undefined> {
  const length = request.headers.get("content-length");
  if (Number(length ?? 0) > limit) return undefined;
  // A declared length within the limit is read whole, straight from the socket (no web stream made).
  if (length !== null && !request.headers.has("transfer-encoding")) return request.text();
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A tools/call refused before it ran (rate-limited) is one audit event too, naming what the caller named. */
function auditRefusedMcpCall(
  deps: GatewayDeps,
  c: Context<AppEnv>,
  body: unknown,
  at: { server: string | undefined; toolset: string | undefined },
  code: string,
): void {
  const { method, params } = (Array.isArray(body) ? {} : (body ?? {})) as {
    method?: unknown;
    params?: unknown;
  };
  const { name, arguments: args } = (params ?? {}) as { name?: unknown; arguments?: unknown };
  if (method !== "tools/call" || typeof name !== "string") return;
  const plane = mcpPlane(at);
  const named = at.server !== undefined ? qualifyToolName(at.server, name) : name;
  const note = callNote({ plane, source: clientAddress(c), toolset: at.toolset }, named, deps.directory);
  const given = typeof args === "object" && args !== null && !Array.isArray(args) ? args : {};
  auditRefused(deps, note, c.get("principal"), given as Record<string, unknown>, code);
}
