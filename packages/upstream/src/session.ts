import type { ToolInfo } from "@mcpgw/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { transportHttpStatus } from "./classify-failure";
import { internalFetch } from "./internal-fetch";
import { limitResponses } from "./limits";

/** Where an upstream MCP server lives and what to send it. */
export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
  /**
   * The deployment's own stdio runner (a configured internal endpoint, typically on a private
   * address): reached directly, not through the outbound guard that vets admin-supplied URLs.
   */
  internal?: boolean;
}

/** An initialized MCP client session with an upstream. */
export interface UpstreamSession {
  client: Client;
  transport: Transport;
  /** `in-memory`: a transport handed in ({@link connectSession}), as in-process tests do. */
  kind: "streamable-http" | "sse" | "in-memory";
  close(): Promise<void>;
}

export interface OpenOptions {
  /** The fetch every request goes through (the outbound guard). */
  fetch: typeof fetch;
  /** The fetch for an `internal` target (default: the process's one socket-capped internal fetch). */
  internalFetch?: typeof fetch;
  signal?: AbortSignal;
  /** Per-request timeout for initialize. */
  timeoutMs: number;
  /** The largest message the upstream may send (one body, one SSE event); default 16 MiB. */
  maxMessageBytes?: number;
}

/**
 * How a probe opens its session: {@link openSession} (HTTP) unless told otherwise — a unit test hands
 * in one that connects over the SDK's linked in-memory transports instead.
 */
export type SessionOpener = (target: UpstreamTarget, options: OpenOptions) => Promise<UpstreamSession>;

/** The default bound of one upstream message: 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const CLIENT_INFO = { name: "mcp-gateway", version: "1.0.0" };

/**
 * Connects and initializes over streamable HTTP, falling back to legacy HTTP+SSE at the same URL when
 * the server refuses streamable HTTP with a 4xx (the SDK's backwards-compatibility recipe).
 */
export async function openSession(target: UpstreamTarget, options: OpenOptions): Promise<UpstreamSession> {
  const url = new URL(target.url);
  const requestInit = { headers: target.headers };
  const fetchImpl = limitResponses(
    target.internal ? (options.internalFetch ?? internalFetch()) : options.fetch,
    options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
  );
  try {
    const transport = new StreamableHTTPClientTransport(url, { requestInit, fetch: fetchImpl });
    return await initialize(transport, "streamable-http", options);
  } catch (error) {
    if (!isLegacyOnlyRefusal(error) || options.signal?.aborted) throw error;
  }
  const transport = new SSEClientTransport(url, { requestInit, fetch: fetchImpl });
  return initialize(transport, "sse", options);
}

/**
 * Connects and initializes a client over a transport already made — e.g. one end of
 * `InMemoryTransport.createLinkedPair()`, the other served by an SDK `Server` — for in-process tests.
 */
export function connectSession(
  transport: Transport,
  options: Pick<OpenOptions, "signal" | "timeoutMs">,
): Promise<UpstreamSession> {
  return initialize(transport, "in-memory", options);
}

async function initialize(
  transport: Transport,
  kind: UpstreamSession["kind"],
  options: Pick<OpenOptions, "signal" | "timeoutMs">,
): Promise<UpstreamSession> {
  const client = new Client(CLIENT_INFO);
  try {
    await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  return { client, transport, kind, close: () => closeSession(client, transport) };
}

/** How long a polite session DELETE may take before the session is simply dropped. */
const TERMINATE_TIMEOUT_MS = 2_000;

/** Ends the upstream's session state too (HTTP DELETE for streamable HTTP), then closes the client. */
async function closeSession(client: Client, transport: Transport): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    const timeout = new Promise((resolve) => setTimeout(resolve, TERMINATE_TIMEOUT_MS).unref());
    await Promise.race([transport.terminateSession().catch(() => undefined), timeout]);
  }
  await client.close().catch(() => undefined);
}

/** A 4xx other than 401/403 on the first POST: the server does not speak streamable HTTP. */
function isLegacyOnlyRefusal(error: unknown): boolean {
  const status = transportHttpStatus(error);
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/** Every tool the session's server lists, following pagination cursors. */
export async function listAllTools(
  session: UpstreamSession,
  options: { signal?: AbortSignal; timeoutMs: number },
): Promise<ToolInfo[]> {
  const tools: ToolInfo[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    const page = await session.client.listTools(cursor ? { cursor } : {}, {
      signal: options.signal,
      timeout: options.timeoutMs,
    });
    for (const tool of page.tools) {
      tools.push({
        name: tool.name,
        ...(tool.title ? { title: tool.title } : {}),
        ...(tool.description ? { description: tool.description } : {}),
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
        ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
      });
    }
    cursor = page.nextCursor;
    if (cursor && seen.has(cursor)) throw new Error("tools/list returned a cursor it already returned");
    if (cursor) seen.add(cursor);
  } while (cursor);
  return tools;
}
