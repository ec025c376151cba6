import type { IncomingMessage, ServerResponse } from "node:http";
import { MAX_CALL_MS } from "@mcpgw/upstream";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

/** How the face learns whether its child still answers. */
export interface FaceOptions {
  /**
   * Whether the child answers the runner's ping (a hung one is killed by this check). Asked when a
   * forwarded request ends unanswered — its caller went away, or it timed out — and for the
   * caller's own `ping`, which so reaches the child instead of being answered by the face alone.
   */
  alive?: () => Promise<boolean>;
}

/**
 * Serves one HTTP request of the streamable-HTTP MCP face of a child: a stateless MCP server whose
 * tools (and resources and prompts, when the child has them) forward to the runner's client session
 * with the child. Progress and cancellation pass through; `ping` is the child's liveness.
 */
export async function serveFace(
  child: Client,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  options: FaceOptions = {},
): Promise<void> {
  const capabilities = child.getServerCapabilities() ?? {};
  const server = new Server(
    {
      name: child.getServerVersion()?.name ?? "stdio-server",
      version: child.getServerVersion()?.version ?? "0",
    },
    {
      capabilities: {
        tools: {},
        ...(capabilities.resources ? { resources: {} } : {}),
        ...(capabilities.prompts ? { prompts: {} } : {}),
      },
      ...(child.getInstructions() ? { instructions: child.getInstructions() } : {}),
    },
  );
  /** A forwarded request; one left unanswered gets the child's liveness checked. */
  const forward = <T>(extra: Extra, run: () => Promise<T>): Promise<T> =>
    run().catch((error: unknown) => {
      if (extra.signal.aborted || isTimeout(error)) void options.alive?.();
      throw error;
    });
  server.setRequestHandler(PingRequestSchema, async () => {
    if (options.alive && !(await options.alive()))
      throw new McpError(ErrorCode.InternalError, "the server does not answer");
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, (request, extra) =>
    forward(extra, () => child.listTools(request.params, { signal: extra.signal })),
  );
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    return forward(extra, () =>
      child.request(request, CallToolResultSchema, {
        signal: extra.signal,
        timeout: MAX_CALL_MS,
        ...(progressToken === undefined
          ? {}
          : {
              resetTimeoutOnProgress: true,
              onprogress: (progress) =>
                void extra.sendNotification({
                  method: "notifications/progress",
                  params: { ...progress, progressToken },
                }),
            }),
      }),
    );
  });
  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
      forward(extra, () => child.listResources(request.params, { signal: extra.signal })),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) =>
      forward(extra, () => child.listResourceTemplates(request.params, { signal: extra.signal })),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      forward(extra, () => child.readResource(request.params, { signal: extra.signal })),
    );
  }
  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (request, extra) =>
      forward(extra, () => child.listPrompts(request.params, { signal: extra.signal })),
    );
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
      forward(extra, () => child.getPrompt(request.params, { signal: extra.signal })),
    );
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function isTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}
