/**
 * The MCP server the gateway is to its clients, an SDK `Server` per stateless exchange at a time
 * (2026-07-28 and sessionless 2025 requests; reused from one to the next) or per session (2025): `/mcp` aggregates every server the caller may use — tools as `<server>__<tool>`,
 * prompts as `<server>__<prompt>`, resources under gateway URIs — and `/mcp/{server}` fronts one
 * server under its own names. Everything is forwarded whole; what an upstream sends mid-call
 * (progress, logs, questions for the user or the model) reaches the caller in its own era.
 * Here the server is built and its handlers registered: tools in `mcp-tools`, everything else in
 * `mcp-forwarding`, what a request shares in `mcp-request`.
 */
import { errorFields, RPC } from "@mcpgw/core";
import {
  type Implementation,
  type JSONRPCRequest,
  type Result,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { toolsetOfEndpoint } from "../toolsets";
import { toMcpError } from "./mcp-errors";
import { complete, getPrompt, list, readResource, setLevel, subscribe } from "./mcp-forwarding";
import type { GatewayServer, McpServices } from "./mcp-request";
import { callTool, fixToolMode, listTools } from "./mcp-tools";

/** The capabilities an endpoint offers: `/mcp` everything; `/mcp/{server}` what its upstream does. */
export function endpointCapabilities(upstream: Record<string, unknown> | undefined): ServerCapabilities {
  if (!upstream) {
    return {
      tools: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
    };
  }
  const has = (name: string) => upstream[name] !== undefined && upstream[name] !== null;
  const resources = upstream.resources as { subscribe?: boolean } | undefined;
  return {
    tools: { listChanged: true },
    ...(has("resources")
      ? { resources: { listChanged: true, ...(resources?.subscribe ? { subscribe: true } : {}) } }
      : {}),
    ...(has("prompts") ? { prompts: { listChanged: true } } : {}),
    ...(has("completions") ? { completions: {} } : {}),
    logging: {},
  };
}

/** The key under which the gateway names itself in its `initialize` and `server/discover` results' `_meta`. */
export const GATEWAY_META_KEY = "io.mcpgw/gateway";

/** The gateway's own identity. */
const GATEWAY_INFO = { name: "mcp-gateway", version: "1.0.0" } as const;

/** What the catalogue recorded of an upstream (its last probe's profile): what `/mcp/{server}` shows. */
export interface UpstreamFace {
  capabilities: Record<string, unknown>;
  serverInfo?: Record<string, unknown> | undefined;
  instructions?: string | undefined;
}

/** What an endpoint answers `initialize` and `server/discover` with. */
export interface EndpointFace {
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  instructions?: string;
}

/**
 * `/mcp` is the gateway, with its own identity and instructions; `/mcp/{server}` shows its upstream's
 * as recorded — its `serverInfo` whole (title, icons…), its instructions or none — and only when the
 * upstream's identity lacks a name or version does the endpoint take the gateway's name for it.
 */
export function endpointFace(endpoint: string | undefined, upstream: UpstreamFace | undefined): EndpointFace {
  const toolset = toolsetOfEndpoint(endpoint);
  if (toolset !== undefined) {
    // A tool set serves tools only: no resources, prompts or logging of its own.
    return {
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: `${GATEWAY_INFO.name}/sets/${toolset}`, version: GATEWAY_INFO.version },
      instructions: `The tools of tool set '${toolset}' that this key may use, named <server>__<tool> unless the set renames them.`,
    };
  }
  const capabilities = endpointCapabilities(
    endpoint === undefined ? undefined : (upstream?.capabilities ?? {}),
  );
  if (endpoint === undefined) {
    return {
      capabilities,
      serverInfo: { ...GATEWAY_INFO },
      instructions:
        "Every MCP server this key may use: tools and prompts named <server>__<name>, resources under mcpgw URIs.",
    };
  }
  const info = upstream?.serverInfo ?? {};
  const named = typeof info.name === "string" && typeof info.version === "string";
  return {
    capabilities,
    serverInfo: (named
      ? info
      : {
          ...info,
          name: `${GATEWAY_INFO.name}/${endpoint}`,
          version: GATEWAY_INFO.version,
        }) as Implementation,
    ...(upstream?.instructions ? { instructions: upstream.instructions } : {}),
  };
}

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** An SDK server that names the gateway in `_meta` (under {@link GATEWAY_META_KEY}) of its handshake results. */
class GatewayMcpServer extends Server {
  /** Called as a 2025 `initialize` is answered (a session takes its tool mode then). */
  onInitialize: ((ctx: ServerContext) => Promise<void>) | undefined;

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== "initialize" && method !== "server/discover") return wrapped;
    return async (request, ctx) => {
      if (method === "initialize") await this.onInitialize?.(ctx);
      const result = await wrapped(request, ctx);
      return { ...result, _meta: { ...result._meta, [GATEWAY_META_KEY]: { ...GATEWAY_INFO } } };
    };
  }
}

/**
 * A fresh SDK server for `endpoint` (a server name, or undefined for `/mcp`), showing `face`; one for a
 * 2025 `session` keeps the tool mode it first serves in.
 */
export function createGatewayServer(
  services: McpServices,
  endpoint: string | undefined,
  face: EndpointFace,
  session = false,
): Server {
  const { deps } = services;
  const { capabilities } = face;
  const server = new GatewayMcpServer(face.serverInfo, {
    capabilities,
    ...(face.instructions ? { instructions: face.instructions } : {}),
    requestState: { verify: (state, ctx) => services.codec.verify(state, ctx) },
    // Tools come from the data plane's cached directory; everything else is read live.
    cacheHints: {
      "tools/list": { ttlMs: deps.directory.maxAgeMs, cacheScope: "private" },
      "prompts/list": { ttlMs: 0, cacheScope: "private" },
      "resources/list": { ttlMs: 0, cacheScope: "private" },
      "resources/templates/list": { ttlMs: 0, cacheScope: "private" },
      "resources/read": { ttlMs: 0, cacheScope: "private" },
    },
    jsonSchemaValidator: services.validator,
  });
  const toolset = toolsetOfEndpoint(endpoint);
  const gateway: GatewayServer =
    toolset === undefined
      ? { services, server, endpoint, session }
      : { services, server, endpoint: undefined, toolset, session };
  if (session) server.onInitialize = (ctx) => fixToolMode(gateway, ctx);
  // Every failure crosses the wire as JSON-RPC from the one error table.
  const on = (method: string, handle: (params: Params, ctx: ServerContext) => Promise<unknown>) =>
    server.setRequestHandler(
      method as "ping",
      (async (request: { params?: unknown }, ctx: ServerContext) => {
        try {
          return await handle((request.params ?? {}) as Params, ctx);
        } catch (error) {
          const wire = toMcpError(error);
          if (wire.code === RPC.INTERNAL_ERROR && wire.message === "internal error")
            deps.logger.error("mcp request failed", { method, ...errorFields(error) });
          throw wire;
        }
      }) as never,
    );

  on("tools/list", (params, ctx) => listTools(gateway, params.cursor, ctx));
  on("tools/call", (params, ctx) => callTool(gateway, params.name, params.arguments ?? {}, ctx));
  if (capabilities.resources) {
    on("resources/list", (params, ctx) => list(gateway, "resources/list", "resources", params.cursor, ctx));
    on("resources/templates/list", (params, ctx) =>
      list(gateway, "resources/templates/list", "resourceTemplates", params.cursor, ctx),
    );
    on("resources/read", (params, ctx) => readResource(gateway, params.uri, ctx));
    if (capabilities.resources.subscribe) {
      on("resources/subscribe", (params, ctx) => subscribe(gateway, "resources/subscribe", params.uri, ctx));
      on("resources/unsubscribe", (params, ctx) =>
        subscribe(gateway, "resources/unsubscribe", params.uri, ctx),
      );
    }
  }
  if (capabilities.prompts) {
    on("prompts/list", (params, ctx) => list(gateway, "prompts/list", "prompts", params.cursor, ctx));
    on("prompts/get", (params, ctx) =>
      getPrompt(gateway, params.name, params.arguments as Record<string, string>, ctx),
    );
  }
  if (capabilities.completions) {
    on("completion/complete", (params, ctx) =>
      complete(gateway, params as unknown as Record<string, unknown>, ctx),
    );
  }
  if (capabilities.logging) on("logging/setLevel", (params, ctx) => setLevel(gateway, params.level, ctx));
  return server;
}

/** The request params the handlers read (the SDK has validated their shape per method). */
interface Params {
  cursor?: string;
  name: string;
  uri: string;
  level: string;
  arguments?: Record<string, unknown>;
}
