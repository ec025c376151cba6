/**
 * A tiny SDK-written MCP upstream that reports what happened to each `wait` call on its side:
 * started, finished, or cancelled by the client (`notifications/cancelled` aborts the handler's signal).
 * Used to see that a gateway caller's disconnect reaches the upstream.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

export interface ObservingUpstream {
  url: string;
  readonly started: number;
  readonly finished: number;
  readonly cancelled: number;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export async function startObservingUpstream(): Promise<ObservingUpstream> {
  let started = 0;
  let finished = 0;
  let cancelled = 0;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sockets = new Set<Socket>();

  function mcpServer(): Server {
    const server = new Server({ name: "observing", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: "wait",
          description: "Waits `ms` milliseconds (cancellable)",
          inputSchema: { type: "object", properties: { ms: { type: "number" } }, required: ["ms"] },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      started++;
      const ms = Number(request.params.arguments?.ms ?? 0);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          finished++;
          resolve();
        }, ms);
        extra.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            cancelled++;
            reject(new Error("cancelled"));
          },
          { once: true },
        );
      });
      return { content: [{ type: "text", text: "waited" }] };
    });
    return server;
  }

  const http = createServer((req, res) => {
    void (async () => {
      const sessionId = req.headers["mcp-session-id"];
      if (typeof sessionId === "string") {
        const transport = transports.get(sessionId);
        if (!transport) {
          res.writeHead(404).end();
          return;
        }
        if (req.method === "POST") return transport.handleRequest(req, res, await readJson(req));
        return transport.handleRequest(req, res);
      }
      if (req.method !== "POST") {
        res.writeHead(400).end();
        return;
      }
      const body = await readJson(req);
      if (!isInitializeRequest(body)) {
        res.writeHead(400).end();
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          transports.set(id, transport);
        },
      });
      await mcpServer().connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  http.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get started() {
      return started;
    },
    get finished() {
      return finished;
    },
    get cancelled() {
      return cancelled;
    },
    async close() {
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
