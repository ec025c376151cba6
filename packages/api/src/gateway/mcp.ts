import { AppError, describeBytes, jsonDepth, MAX_JSON_DEPTH, qualifyToolName, RPC } from "@mcpgw/core";
import { CallFailure, requestUpstream, type UpstreamSession } from "@mcpgw/upstream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { problemOf } from "../problem";
import type { RouteGroup } from "../route-groups";
import { type DirectoryEntry, isAvailable } from "./directory";
import { scopeOf } from "./routes";
import {
  type CatalogTool,
  callGatewayTool,
  type GatewayDeps,
  inScope,
  isThreadScoped,
  listTools,
  type ServerScope,
  withServerSession,
} from "./service";

/** Tools per `tools/list` page. */
export const MCP_PAGE_SIZE = 100;
const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** Who may talk to the MCP endpoints from a browser, and whether the gateway listens on loopback. */
export interface McpOriginPolicy {
  /** Origins allowed besides loopback ones (e.g. a hosted client's origin). */
  allowedOrigins?: string[];
  /** Listening on loopback: the Host header must name loopback too (DNS-rebinding protection). */
  loopbackOnly?: boolean;
}

/**
 * The MCP endpoints for clients: `/mcp` aggregates every tool the caller's key may use as
 * `<server>__<tool>`; `/mcp/{server}` fronts one server under its own tool names. Stateless,
 * JSON responses — the same code behind a buffered Lambda and locally.
 */
export function registerMcpRoutes(group: RouteGroup, deps: GatewayDeps, policy: McpOriginPolicy = {}): void {
  const origins = originGuard(policy);
  group.all("/mcp", origins, group.guard, (c) => serveMcp(c, deps, undefined));
  group.all("/mcp/:server", origins, group.guard, (c) => serveMcp(c, deps, c.req.param("server")));
}

async function serveMcp(
  c: Context<AppEnv>,
  appDeps: GatewayDeps,
  server: string | undefined,
): Promise<Response> {
  const deps = { ...appDeps, logger: c.get("logger") ?? appDeps.logger };
  const scope = scopeOf(c.get("principal"));
  if (server !== undefined) {
    const entry =
      (await deps.directory.snapshot()).byName.get(server) ??
      (await deps.directory.fresh()).byName.get(server);
    if (!entry || !inScope(scope, entry.server.id)) {
      return problemOf(c, "server.not_found", `No server named '${server}'.`);
    }
  }
  if (c.req.method === "GET" || c.req.method === "DELETE") {
    // Stateless: no standalone server→client SSE stream and no session to end. The transport spec asks
    // for 405 here; an SSE stream that closes at once would have clients reconnecting in a loop.
    return c.json(
      {
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless; use POST." },
        id: null,
      },
      405,
      { allow: "POST" },
    );
  }
  const parsed = await readMcpBody(c.req.raw);
  if (parsed instanceof Response) return parsed;
  const passthrough = server === undefined ? undefined : await upstreamCapabilities(deps, server);
  const mcp = createMcpServer(deps, scope, server, passthrough);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
  });
  await mcp.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw, { parsedBody: parsed.body });
  } finally {
    void mcp.close();
  }
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
    return rpcError(
      new AppError("request.too_large", `The request body exceeds ${describeBytes(MAX_MCP_BODY_BYTES)}.`),
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return rpcError(new AppError("request.malformed_json", "Parse error: the body is not valid JSON."));
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
      return rpcError(error, typeof id === "string" || typeof id === "number" ? id : null);
    }
  }
  return { body };
}

/** The body as text, or undefined once it passes `limit` bytes (reading stops there). */
async function readBounded(request: Request, limit: number): Promise<string | undefined> {
  if (Number(request.headers.get("content-length") ?? 0) > limit) return undefined;
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

/** A gateway problem as a JSON-RPC error response: the HTTP status and JSON-RPC code from the table. */
function rpcError(error: AppError, id: string | number | null = null): Response {
  const body = {
    jsonrpc: "2.0",
    error: { code: error.rpcCode, message: error.detail, data: { code: error.code, ...error.extra } },
    id,
  };
  const headers = {
    "content-type": "application/json",
    ...(error.status === 413 ? { connection: "close" } : {}),
  };
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/** What `/mcp/{server}` passes through besides tools: the upstream's resources and prompts, if any. */
interface Passthrough {
  entry: DirectoryEntry;
  resources: boolean;
  prompts: boolean;
}

/**
 * The resources/prompts capabilities of a server's upstream, read off its warm session (no network
 * when warm). A thread-scoped, unavailable or unreachable server passes through tools only.
 */
async function upstreamCapabilities(deps: GatewayDeps, server: string): Promise<Passthrough | undefined> {
  const entry = (await deps.directory.snapshot()).byName.get(server);
  if (!entry || !isAvailable(entry) || isThreadScoped(entry)) return undefined;
  try {
    const capabilities = await withServerSession(deps, entry, async (session) =>
      session.client.getServerCapabilities(),
    );
    return { entry, resources: Boolean(capabilities?.resources), prompts: Boolean(capabilities?.prompts) };
  } catch {
    return undefined;
  }
}

/** A per-request MCP server over the data plane (stateless: nothing survives the request). */
function createMcpServer(
  deps: GatewayDeps,
  scope: ServerScope,
  server: string | undefined,
  passthrough: Passthrough | undefined,
): Server {
  const mcp = new Server(
    { name: server ? `mcp-gateway/${server}` : "mcp-gateway", version: "1.0.0" },
    {
      capabilities: {
        tools: {},
        ...(passthrough?.resources ? { resources: {} } : {}),
        ...(passthrough?.prompts ? { prompts: {} } : {}),
      },
      instructions: server
        ? `Tools of the '${server}' MCP server, through MCP Gateway.`
        : "Tools of every MCP server this key may use, named <server>__<tool>.",
    },
  );

  mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const all = await listTools(deps, { scope });
    const visible = server ? all.filter((tool) => tool.server === server) : all;
    const offset = decodeCursor(request.params?.cursor);
    const page = visible.slice(offset, offset + MCP_PAGE_SIZE);
    const next = offset + MCP_PAGE_SIZE < visible.length ? encodeCursor(offset + MCP_PAGE_SIZE) : undefined;
    return {
      tools: page.map((tool) => mcpTool(tool, server !== undefined)),
      ...(next ? { nextCursor: next } : {}),
    };
  });

  mcp.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const qualified = server ? qualifyToolName(server, request.params.name) : request.params.name;
    try {
      const result = await callGatewayTool(deps, qualified, request.params.arguments ?? {}, {
        scope,
        signal: extra.signal,
      });
      return {
        content: result.content as CallToolResult["content"],
        ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
        isError: result.isError,
      };
    } catch (error) {
      throw toMcpError(error);
    }
  });
  if (passthrough) forwardResourcesAndPrompts(mcp, deps, passthrough);
  return mcp;
}

/** Registers handlers that forward resources/* and prompts/* to the upstream's warm session, unchanged. */
function forwardResourcesAndPrompts(
  mcp: Server,
  deps: GatewayDeps,
  { entry, resources, prompts }: Passthrough,
): void {
  const forward =
    <T>(
      run: (
        client: UpstreamSession["client"],
        options: { timeout: number; signal?: AbortSignal },
      ) => Promise<T>,
    ) =>
    async (_request: unknown, extra: { signal: AbortSignal }): Promise<T> => {
      try {
        return await withServerSession(
          deps,
          entry,
          (session, options) =>
            requestUpstream((requestOptions) => run(session.client, requestOptions), options),
          { signal: extra.signal },
        );
      } catch (error) {
        throw toMcpError(error);
      }
    };
  if (resources) {
    mcp.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
      forward((client, o) => client.listResources(request.params, o))(request, extra),
    );
    mcp.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) =>
      forward((client, o) => client.listResourceTemplates(request.params, o))(request, extra),
    );
    mcp.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      forward((client, o) => client.readResource(request.params, o))(request, extra),
    );
  }
  if (prompts) {
    mcp.setRequestHandler(ListPromptsRequestSchema, (request, extra) =>
      forward((client, o) => client.listPrompts(request.params, o))(request, extra),
    );
    mcp.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
      forward((client, o) => client.getPrompt(request.params, o))(request, extra),
    );
  }
}

function mcpTool(tool: CatalogTool, unprefixed: boolean): Tool {
  return {
    name: unprefixed ? tool.upstreamName : tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema as Tool["inputSchema"],
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Tool["outputSchema"] } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}

/**
 * Errors that cross the wire as JSON-RPC, from the one error table: an upstream's own JSON-RPC error
 * (on tools/call as on every forwarded request) passes through with its code and its (scrubbed)
 * message; a gateway problem carries its table code and its dotted code in `data.code`; anything
 * else is an internal error that says nothing more.
 */
export function toMcpError(error: unknown): McpError {
  const upstream = upstreamRpcError(error);
  if (upstream) return upstream;
  if (error instanceof CallFailure && error.kind === "too_large") return toMcpError(tooLarge(error));
  if (error instanceof CallFailure)
    return new McpError(RPC.INTERNAL_ERROR, `upstream ${error.kind}: ${error.message}`);
  if (!(error instanceof AppError)) return new McpError(RPC.INTERNAL_ERROR, "internal error");
  return new McpError(error.rpcCode, error.detail, { code: error.code, ...error.extra });
}

/** An upstream's JSON-RPC error behind `error` (through AppError and CallFailure causes), as sent on. */
function upstreamRpcError(error: unknown): McpError | undefined {
  for (let link = error, depth = 0; link instanceof Error && depth < 4; link = link.cause, depth++) {
    if (link instanceof CallFailure && link.kind === "rpc" && link.cause instanceof McpError) {
      // The failure's text is already scrubbed of credentials; the SDK's "MCP error -N:" prefixes go.
      return new McpError(
        link.cause.code,
        link.message.replace(/^(MCP error -?\d+: )+/, ""),
        link.cause.data,
      );
    }
  }
  return undefined;
}

function tooLarge(error: CallFailure): AppError {
  return new AppError("upstream.response_too_large", error.message);
}

/** The `tools/list` cursor for the page starting at `offset`: opaque to clients, as MCP asks. */
export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString("base64url");
}

/** The offset a cursor stands for (0 without one); one that names no whole offset ≥ 0 is invalid params. */
export function decodeCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  try {
    const offset = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown }).o;
    if (typeof offset === "number" && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new McpError(ErrorCode.InvalidParams, "invalid cursor");
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(:\d+)?$/i;

/**
 * DNS-rebinding protection from the MCP security guidance: a browser Origin must be loopback or
 * explicitly allowed, and on a loopback listener the Host header must be loopback too.
 */
export function originGuard(policy: McpOriginPolicy) {
  const allowed = new Set(
    (policy.allowedOrigins ?? []).map((origin) => origin.replace(/\/$/, "").toLowerCase()),
  );
  return createMiddleware<AppEnv>(async function originGuard(c, next) {
    const origin = c.req.header("origin");
    if (origin && !allowed.has(origin.toLowerCase()) && !isLoopbackOrigin(origin)) {
      return problemOf(c, "auth.forbidden", `Origin '${origin}' is not allowed.`);
    }
    if (policy.loopbackOnly && !LOOPBACK_HOST.test(c.req.header("host") ?? "")) {
      return problemOf(c, "auth.forbidden", "Host header does not name this loopback listener.");
    }
    await next();
  });
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOST.test(url.host);
  } catch {
    return false;
  }
}
