import { type ServerProfile, type ToolInfo, toServerProfile } from "@mcpgw/core";
import {
  type AuthProvider,
  type Client,
  type DiscoverResult,
  type PriorDiscovery,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { CallRouter, declaresCapabilityFor, type UpstreamAsk } from "./call-context";
import { transportHttpStatus } from "./classify-failure";
import { DirectCalls } from "./direct-call";
import { GatewayClient } from "./gateway-client";
import { internalFetch } from "./internal-fetch";
import { jsonSchemaValidator } from "./json-schema";
import { lenientJson } from "./lenient-json";
import { limitResponses } from "./limits";
import { type SessionLogListener, tapSessionLogs } from "./session-logs";
import { withTraceHeaders } from "./trace-headers";

/** Where an upstream MCP server lives and what to send it. */
export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
  /**
   * The deployment's own stdio runner (a configured internal endpoint, typically on a private
   * address): reached directly, not through the outbound guard that vets admin-supplied URLs.
   */
  internal?: boolean;
  /**
   * The bearer of an upstream the gateway is an OAuth client of, asked before every request; on a 401
   * `onUnauthorized` may find a newer token (the request is retried once).
   */
  auth?: AuthProvider;
}

/** The protocol era a session speaks: 2026-07-28 and later (`modern`), or 2025 and before (`legacy`). */
export type ProtocolEra = "modern" | "legacy";

/** Which lists of an upstream changed (its `notifications/{tools,prompts,resources}/list_changed`). */
export type ListKind = "tools" | "prompts" | "resources";

/** A connected MCP client session with an upstream, in whichever era the upstream speaks. */
export interface UpstreamSession {
  client: GatewayClient;
  transport: Transport;
  /** `in-memory`: a transport handed in ({@link connectSession}), as in-process tests do. */
  kind: "streamable-http" | "sse" | "in-memory";
  era: ProtocolEra;
  /** The negotiated protocol revision, e.g. `2026-07-28` or `2025-11-25`. */
  protocolVersion: string;
  /** Routes what the upstream sends mid-call to the call it belongs to. */
  router: CallRouter;
  /** The upstream's `server/discover` answer (modern era): reusable as `prior` for the next connect. */
  discover: DiscoverResult | undefined;
  /**
   * Warm tool calls sent below the SDK ({@link DirectCalls}): a 2025 streamable-HTTP session with no
   * OAuth bearer (whose 401s the SDK's transport answers), to an upstream that is not the stdio runner.
   */
  direct?: DirectCalls;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** The fetch every request goes through (the outbound guard). */
  fetch: typeof fetch;
  /** The fetch for an `internal` target (default: the process's one socket-capped internal fetch). */
  internalFetch?: typeof fetch;
  signal?: AbortSignal;
  /** Per-request timeout for connecting (discover or initialize). */
  timeoutMs: number;
  /** The largest message the upstream may send (one body, one SSE event); default 16 MiB. */
  maxMessageBytes?: number;
  /** What an earlier connect learned of the server's era: skips negotiating it again. */
  prior?: PriorDiscovery;
  /**
   * Called when the upstream says a list changed, while the session lives: a 2025 session hears it on
   * its GET stream; a 2026 one keeps a `subscriptions/listen` stream open for it.
   */
  onListChanged?: (kind: ListKind) => void;
  /** Called when the upstream says a subscribed resource changed. */
  onResourceUpdated?: (uri: string) => void;
  /**
   * Called with each log line the upstream sends outside any call (a 2025 streamable-HTTP session's
   * GET stream; a legacy HTTP+SSE stream mixes in calls' lines, so it tells none). Only a session
   * shared by every caller of the server may be given it: a caller's own session's lines are theirs.
   */
  onSessionLog?: SessionLogListener;
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
 * What the gateway declares to upstreams: it can pass elicitation (form and URL), sampling and roots
 * requests on to the caller of the call that raised them.
 */
const CLIENT_CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/**
 * Connects over streamable HTTP in the era the server speaks (2026-07-28 via `server/discover`, else
 * `initialize`; in the era `prior` names, when given), falling back to legacy HTTP+SSE at the same URL
 * when the server refuses streamable HTTP with a 4xx (the SDK's backwards-compatibility recipe) and
 * no `prior` says it speaks it.
 */
export async function openSession(target: UpstreamTarget, options: OpenOptions): Promise<UpstreamSession> {
  const url = new URL(target.url);
  const requestInit = { headers: target.headers };
  const auth = target.auth ? { authProvider: target.auth } : {};
  const router = new CallRouter();
  const fetchImpl = router.tap(
    lenientJson(
      limitResponses(
        withTraceHeaders(target.internal ? (options.internalFetch ?? internalFetch()) : options.fetch),
        options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      ),
    ),
  );
  try {
    const streamFetch = options.onSessionLog ? tapSessionLogs(fetchImpl, options.onSessionLog) : fetchImpl;
    let session: UpstreamSession | undefined;
    // Not with an OAuth bearer: its refresh and re-authorization are the SDK's.
    const direct: DirectCalls | undefined = target.auth
      ? undefined
      : new DirectCalls(
          url,
          fetchImpl,
          () => ({
            headers: target.headers,
            sessionId: transport.sessionId,
            protocolVersion: session?.protocolVersion ?? "",
          }),
          (notification) => session?.client.notification(notification as never) ?? Promise.resolve(),
        );
    const transport: StreamableHTTPClientTransport = new StreamableHTTPClientTransport(url, {
      requestInit,
      fetch: direct ? direct.sdkFetch(streamFetch) : streamFetch,
      ...auth,
    });
    session = await connect(transport, "streamable-http", router, options);
    if (direct && session.era === "legacy") {
      const closeTransport = session.close;
      session.direct = direct;
      session.close = async () => {
        // After the transport's own requests end (an answer handed over may be read by the SDK till then).
        await closeTransport();
        direct.close();
      };
    }
    return session;
  } catch (error) {
    // A `prior` names what a connect over streamable HTTP learned: a refusal now is not "SSE only".
    if (!isLegacyOnlyRefusal(error) || options.signal?.aborted || options.prior) throw error;
  }
  const transport = new SSEClientTransport(url, { requestInit, fetch: fetchImpl, ...auth });
  return connect(transport, "sse", router, { ...options, prior: { kind: "legacy" } });
}

/**
 * Connects a client over a transport already made — e.g. one end of
 * `InMemoryTransport.createLinkedPair()`, the other served by an SDK `Server` — for in-process tests.
 */
export function connectSession(
  transport: Transport,
  options: Pick<OpenOptions, "signal" | "timeoutMs" | "prior" | "onListChanged" | "onResourceUpdated">,
): Promise<UpstreamSession> {
  return connect(transport, "in-memory", new CallRouter(), options);
}

async function connect(
  transport: Transport,
  kind: UpstreamSession["kind"],
  router: CallRouter,
  options: Pick<OpenOptions, "signal" | "timeoutMs" | "prior" | "onListChanged" | "onResourceUpdated">,
): Promise<UpstreamSession> {
  const client = new GatewayClient(CLIENT_INFO, {
    capabilities: CLIENT_CAPABILITIES,
    jsonSchemaValidator,
    versionNegotiation: { mode: "auto" },
    // The caller answers what an upstream asks: input_required results are handed back, not fulfilled.
    inputRequired: { autoFulfill: false },
  });
  for (const method of ["elicitation/create", "sampling/createMessage", "roots/list"] as const) {
    client.setRequestHandler(method, (request, ctx) =>
      answerAsk(router, ctx.mcpReq.id, { method, params: request.params }, ctx.mcpReq.signal),
    );
  }
  const onListChanged = options.onListChanged;
  if (onListChanged) {
    client.setNotificationHandler("notifications/tools/list_changed", () => onListChanged("tools"));
    client.setNotificationHandler("notifications/prompts/list_changed", () => onListChanged("prompts"));
    client.setNotificationHandler("notifications/resources/list_changed", () => onListChanged("resources"));
  }
  const onResourceUpdated = options.onResourceUpdated;
  if (onResourceUpdated) {
    client.setNotificationHandler("notifications/resources/updated", (notification) =>
      onResourceUpdated(notification.params.uri),
    );
  }
  try {
    await client.connect(transport, {
      signal: options.signal,
      timeout: options.timeoutMs,
      ...(options.prior ? { prior: options.prior } : {}),
    });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  const era = client.getProtocolEra() === "modern" ? "modern" : "legacy";
  let closed = false;
  if (era === "modern" && onListChanged) void keepListening(client, () => closed);
  return {
    client,
    transport,
    kind,
    era,
    protocolVersion: client.getNegotiatedProtocolVersion() ?? "unknown",
    router,
    discover: era === "modern" ? client.getDiscoverResult() : undefined,
    close: () => {
      closed = true;
      return closeSession(client, transport);
    },
  };
}

/** How long a 2026 session waits before listening again after its listen stream dropped. */
const RELISTEN_DELAY_MS = 2_000;

/**
 * Keeps a `subscriptions/listen` stream open on a 2026 session for the list changes the server
 * announces (the notifications reach the session's handlers), listening again after a drop, until
 * the session closes. A server that announces none is not listened to.
 */
async function keepListening(client: Client, isClosed: () => boolean): Promise<void> {
  const capabilities = client.getServerCapabilities() ?? {};
  const filter = {
    ...(capabilities.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(capabilities.prompts?.listChanged ? { promptsListChanged: true } : {}),
    ...(capabilities.resources?.listChanged ? { resourcesListChanged: true } : {}),
  };
  if (Object.keys(filter).length === 0) return;
  while (!isClosed()) {
    try {
      const subscription = await client.listen(filter);
      if ((await subscription.closed) === "local") return;
    } catch {
      // The server refused or the stream could not open: try again after the delay.
    }
    await new Promise((resolve) => setTimeout(resolve, RELISTEN_DELAY_MS).unref());
  }
}

/**
 * Answers what a (2025) upstream asks mid-call: the caller of the call it came on answers, when it
 * declared the capability the ask needs; with no such caller, or one that cannot answer or did not
 * declare it, the gateway does — it declines an elicitation, offers no roots (the gateway declared
 * roots to the upstream, so an empty list, not "method not found", is its truthful answer), and
 * refuses sampling.
 */
async function answerAsk(
  router: CallRouter,
  id: string | number,
  ask: UpstreamAsk,
  signal: AbortSignal,
): Promise<never> {
  const owner = router.ownerOf(id);
  if (owner?.ask && declaresCapabilityFor(owner.clientCapabilities, ask))
    return (await owner.ask(ask, signal)) as never;
  if (ask.method === "elicitation/create") return { action: "decline" } as never;
  if (ask.method === "roots/list") return { roots: [] } as never;
  throw new Error("The caller of this tool call cannot answer sampling requests.");
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

/** A 4xx other than 401/403/421 on the first POST: the server does not speak streamable HTTP. */
function isLegacyOnlyRefusal(error: unknown): boolean {
  const status = transportHttpStatus(error);
  // 421: a runner of the fleet that does not hold the instance (asked at the wrong one; look it up again).
  return (
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    status !== 401 &&
    status !== 403 &&
    status !== 421
  );
}

/**
 * What a session learned of its server — protocol revision, capabilities, identity, instructions,
 * its `server/discover` answer — and what a 2025 session with the same server learned of that era
 * (`legacy`: {@link surfaceOf} and its tool names), bounded as the catalogue keeps it (undefined when
 * unusable).
 */
export function profileOf(session: UpstreamSession, legacy?: unknown): ServerProfile | undefined {
  return toServerProfile({
    ...surfaceOf(session),
    discover: session.discover,
    ...(legacy ? { legacy } : {}),
  });
}

/** What a session's server says of itself in the session's era (unbounded: {@link profileOf} bounds it). */
export function surfaceOf(session: UpstreamSession) {
  return {
    protocolVersion: session.protocolVersion,
    capabilities: session.client.getServerCapabilities() ?? {},
    serverInfo: session.client.getServerVersion(),
    instructions: session.client.getInstructions(),
  };
}

/**
 * Every tool the session's server lists, following pagination cursors, each tool whole (its `_meta`,
 * `icons` and whatever else the upstream says about it).
 */
export async function listAllTools(
  session: UpstreamSession,
  options: { signal?: AbortSignal; timeoutMs: number },
): Promise<ToolInfo[]> {
  const tools: ToolInfo[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    // Page by page (the SDK's listTools would walk them all itself, and cache the result).
    const page = await session.client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      { signal: options.signal, timeout: options.timeoutMs },
    );
    for (const tool of page.tools) tools.push(tool as ToolInfo);
    cursor = page.nextCursor;
    if (cursor && seen.has(cursor)) throw new Error("tools/list returned a cursor it already returned");
    if (cursor) seen.add(cursor);
  } while (cursor);
  return tools;
}
