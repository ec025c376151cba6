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
import { Server, type ServerCapabilities, type ServerContext } from "@modelcontextprotocol/server";
import { toMcpError } from "./mcp-errors";
import { complete, getPrompt, list, readResource, setLevel, subscribe } from "./mcp-forwarding";
import type { GatewayServer, McpServices } from "./mcp-request";
import { callTool, listTools } from "./mcp-tools";

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

/** A fresh SDK server for `endpoint` (a server name, or undefined for `/mcp`). */
export function createGatewayServer(
  services: McpServices,
  endpoint: string | undefined,
  capabilities: ServerCapabilities,
): Server {
  const { deps } = services;
  const server = new Server(
    { name: endpoint ? `mcp-gateway/${endpoint}` : "mcp-gateway", version: "1.0.0" },
    {
      capabilities,
      instructions: endpoint
        ? `The '${endpoint}' MCP server, through MCP Gateway.`
        : "Every MCP server this key may use: tools and prompts named <server>__<name>, resources under mcpgw URIs.",
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
    },
  );
  const gateway: GatewayServer = { services, server, endpoint };
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
