import type { IncomingMessage, ServerResponse } from "node:http";
import { MAX_CALL_MS } from "@mcpgw/upstream";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * Serves one HTTP request of the streamable-HTTP MCP face of a child: a stateless MCP server whose
 * tools (and resources and prompts, when the child has them) forward to the runner's client session
 * with the child. Progress and cancellation pass through.
 */
export async function serveFace(
  child: Client,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
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
  server.setRequestHandler(ListToolsRequestSchema, (request, extra) =>
    child.listTools(request.params, { signal: extra.signal }),
  );
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    return child.request(request, CallToolResultSchema, {
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
    });
  });
  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
      child.listResources(request.params, { signal: extra.signal }),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) =>
      child.listResourceTemplates(request.params, { signal: extra.signal }),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      child.readResource(request.params, { signal: extra.signal }),
    );
  }
  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, (request, extra) =>
      child.listPrompts(request.params, { signal: extra.signal }),
    );
    server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
      child.getPrompt(request.params, { signal: extra.signal }),
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
