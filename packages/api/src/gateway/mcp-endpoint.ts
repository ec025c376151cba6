/**
 * Both protocol eras on one URL. Each request is classified as the SDK does: one carrying the
 * 2026-07-28 `_meta` envelope goes to the SDK's stateless handler (`server/discover`, routing headers
 * checked against the body, `subscriptions/listen`, GET/DELETE 405); anything else is 2025-era —
 * served in a session when it opens or names one ({@link LegacySessions}), otherwise per request as
 * JSON (a sessionless 2025 caller).
 */
import { createHash } from "node:crypto";
import { boundedFace, isPerUser, type Logger } from "@mcpgw/core";
import { jsonSchemaValidator } from "@mcpgw/upstream";
import {
  type AuthInfo,
  createMcpHandler,
  createRequestStateCodec,
  InMemoryServerEventBus,
  isLegacyRequest,
  type McpHttpHandler,
  type Server,
  type ServerCapabilities,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { TOOLSET_ENDPOINT_PREFIX, toolsetOfEndpoint } from "../toolsets";
import type { GatewayDeps } from "./deps";
import { type DirectoryEntry, isAvailable } from "./directory";
import type { CallerLimits } from "./limits";
import { ParkedCalls } from "./mcp-parking";
import type { McpCaller, McpServices, RoundState } from "./mcp-request";
import { createGatewayServer, endpointCapabilities, endpointFace, type UpstreamFace } from "./mcp-server";
import { LegacySessions } from "./mcp-sessions";
import { ToolIndexCache } from "./search-mode";
import { withServerSession } from "./server-session";
import { plainLegacyRequest } from "./session-transport";
import { settleEventStream } from "./settle-stream";
import { isThreadScoped } from "./thread-access";

/** Which list changed, as subscribed clients are told. */
export type ChangeKind = "tools" | "prompts" | "resources";

/** SEP-2243's HeaderMismatch: the request's headers and body disagree. */
const HEADER_MISMATCH = -32020;

/** Listen streams per endpoint in this process (each holds a request open). */
const MAX_SUBSCRIPTIONS = 1_024;

/** Idle SDK servers kept per endpoint and capabilities for the next stateless request. */
const MAX_IDLE_SERVERS = 64;

/** How long after its last request a client may still open a listen stream it expects news on. */
const LISTEN_SOON_MS = 30_000;

/** The MCP endpoints of one gateway process. */
export class McpEndpoints {
  private readonly handlers = new Map<string, { handler: McpHttpHandler; bus: InMemoryServerEventBus }>();
  /** SDK servers between stateless exchanges, by endpoint and capabilities. */
  private readonly idle = new Map<string, Server[]>();
  /** The one face kept idle per era and endpoint: its key in {@link idle}. */
  private readonly keptFaces = new Map<string, string>();
  /** SDK servers made for stateless exchanges so far (for tests and metrics): not one per request. */
  serversMade = 0;
  /** How many faces (era, endpoint, what the upstream says of itself) have idle servers kept (for tests). */
  get idleFaces(): number {
    return this.idle.size;
  }
  readonly services: McpServices;
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  /**
   * Called when a request arrives while nothing watched: the change watcher takes its baseline then,
   * so a change between a client's connect and its listen stream is not missed.
   */
  onWatched: (() => void) | undefined;

  /**
   * `secret` seals what callers hand back (request state, session ids): every gateway instance
   * must share it (derived from the admin token when deployed). `limits`, when given, are each
   * caller's: its requests are admitted by them (`/mcp` routes) and its 2025 sessions capped.
   */
  constructor(
    deps: GatewayDeps,
    secret: string,
    private readonly logger: Logger,
    readonly limits?: CallerLimits,
  ) {
    const key = createHash("sha256").update("mcpgw mcp state\0").update(secret).digest();
    this.services = {
      deps,
      parking: new ParkedCalls(),
      codec: createRequestStateCodec<RoundState>({
        key,
        ttlSeconds: 600,
        bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ""}`,
      }),
      sessions: new LegacySessions(
        key,
        (endpoint) => this.newServer(endpoint || undefined, true),
        undefined,
        limits,
      ),
      validator: jsonSchemaValidator,
      indexes: new ToolIndexCache(),
    };
  }

  /**
   * Serves one request of `caller` on `/mcp` (no entry) or `/mcp/{server}`. A POST's event stream that
   * is over at once goes out whole ({@link settleEventStream}); a listen stream goes out as it opens.
   */
  async serve(
    request: Request,
    parsedBody: unknown,
    caller: McpCaller,
    entry: DirectoryEntry | undefined,
    toolset?: string,
  ): Promise<Response> {
    const wasWatched = this.watched;
    this.lastRequestAt = Date.now();
    if (!wasWatched) this.onWatched?.();
    const response = await this.answer(request, parsedBody, caller, entry, toolset);
    // A listen stream is meant to stay open: its headers go at once.
    const listens = (parsedBody as { method?: unknown } | undefined)?.method === "subscriptions/listen";
    return request.method === "POST" && !listens ? settleEventStream(response) : response;
  }

  private async answer(
    request: Request,
    parsedBody: unknown,
    caller: McpCaller,
    entry: DirectoryEntry | undefined,
    toolset: string | undefined,
  ): Promise<Response> {
    const endpoint =
      toolset !== undefined ? `${TOOLSET_ENDPOINT_PREFIX}${toolset}` : (entry?.server.name ?? "");
    const authInfo: AuthInfo = { token: "", clientId: caller.principalKey, scopes: [], extra: { caller } };
    if (!plainLegacyRequest(request, parsedBody) && !(await isLegacyRequest(request, parsedBody))) {
      const response = await this.modern(endpoint).handler.fetch(request, { authInfo, parsedBody });
      return isToolCall(parsedBody) ? headerMismatchAsBadRequest(response) : response;
    }
    const sessionful =
      request.headers.has("mcp-session-id") ||
      ((parsedBody as { method?: unknown } | undefined)?.method === "initialize" &&
        acceptsEventStream(request));
    if (sessionful)
      return this.services.sessions.handle(request, parsedBody, caller.principalKey, endpoint, authInfo, {
        serverId: entry?.server.id,
        scope: caller.scope,
      });
    if (request.method !== "POST") return methodNotAllowed();
    return this.sessionless(request, parsedBody, endpoint, authInfo);
  }

  /**
   * Tells the clients of `endpoint` (a server name; undefined: every endpoint) that a list changed; a
   * tool set's clients hear of every server's tools.
   */
  notify(endpoint: string | undefined, kind: ChangeKind): void {
    for (const [name, { handler }] of this.handlers) {
      if (endpoint !== undefined && name !== "" && name !== endpoint && !isToolsetEndpoint(name, kind))
        continue;
      if (kind === "tools") handler.notify.toolsChanged();
      else if (kind === "prompts") handler.notify.promptsChanged();
      else handler.notify.resourcesChanged();
    }
    for (const session of this.services.sessions.of(undefined)) {
      if (
        endpoint !== undefined &&
        session.endpoint !== "" &&
        session.endpoint !== endpoint &&
        !isToolsetEndpoint(session.endpoint, kind)
      )
        continue;
      const server = session.server;
      const sent =
        kind === "tools"
          ? server.sendToolListChanged()
          : kind === "prompts"
            ? server.sendPromptListChanged()
            : server.sendResourceListChanged();
      void sent.catch(() => undefined);
    }
  }

  /** Tells subscribers of a resource of server `endpoint` (its own URI given) that it changed. */
  resourceUpdated(endpoint: string, gatewayUri: string, uri: string): void {
    this.handlers.get(endpoint)?.handler.notify.resourceUpdated(uri);
    this.handlers.get("")?.handler.notify.resourceUpdated(gatewayUri);
    for (const session of this.services.sessions.of(undefined)) {
      const named = session.endpoint === "" ? gatewayUri : session.endpoint === endpoint ? uri : undefined;
      if (named && session.subscriptions.has(named))
        void session.server.sendResourceUpdated({ uri: named }).catch(() => undefined);
    }
  }

  /**
   * The servers (`/mcp/{server}` names) on which some 2025 session in this process holds a resource
   * subscription or a log level: what the server's upstream session keeps for it must not idle out.
   */
  holdingUpstreamState(): Set<string> {
    const holding = new Set<string>();
    for (const session of this.services.sessions.of(undefined))
      if (session.endpoint !== "" && (session.subscriptions.size > 0 || session.logLevel !== undefined))
        holding.add(session.endpoint);
    return holding;
  }

  /**
   * True while some client in this process listens for changes (a listen stream or a 2025 session),
   * or spoke lately and may be about to.
   */
  get watched(): boolean {
    if (this.services.sessions.size > 0) return true;
    if (Date.now() - this.lastRequestAt < LISTEN_SOON_MS) return true;
    for (const { bus } of this.handlers.values()) if (bus.listenerCount > 0) return true;
    return false;
  }

  async close(): Promise<void> {
    await Promise.all([...this.handlers.values()].map(({ handler }) => handler.close()));
    await this.services.sessions.close();
  }

  private modern(endpoint: string) {
    let entry = this.handlers.get(endpoint);
    if (!entry) {
      const bus = new InMemoryServerEventBus();
      const handler = createMcpHandler(() => this.reusedServer("modern", endpoint || undefined), {
        legacy: "reject",
        responseMode: "auto",
        bus,
        maxSubscriptions: MAX_SUBSCRIPTIONS,
        onerror: (error) => this.logger.debug("mcp request refused", { error: error.message }),
      });
      entry = { handler, bus };
      this.handlers.set(endpoint, entry);
    }
    return entry;
  }

  /**
   * A 2025 request with no session: served on its own and answered as JSON, whatever it accepts
   * besides (the SDK's transport insists on both types in Accept; a JSON-only caller gets JSON).
   */
  private async sessionless(request: Request, parsedBody: unknown, endpoint: string, authInfo: AuthInfo) {
    // An initialize leaves its caller's identity on the server: that one is not handed to anyone else.
    const initializes = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]).some(
      (message) => (message as { method?: unknown } | null)?.method === "initialize",
    );
    const server = initializes
      ? await this.newServer(endpoint || undefined)
      : await this.reusedServer("legacy", endpoint || undefined);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const headers = new Headers(request.headers);
    headers.set("accept", "application/json, text/event-stream");
    await server.connect(transport);
    try {
      return await transport.handleRequest(new Request(request.url, { method: "POST", headers }), {
        parsedBody,
        authInfo,
      });
    } finally {
      void server.close();
    }
  }

  /** A fresh SDK server for a 2025 session or a sessionless 2025 `initialize`. */
  private async newServer(endpoint: string | undefined, session = false) {
    return createGatewayServer(
      this.services,
      endpoint,
      endpointFace(endpoint, await this.upstreamFace(endpoint, "legacy")),
      session,
    );
  }

  /**
   * An SDK server for one stateless exchange: an idle one of this era and endpoint with the same
   * capabilities (a server that served a 2026 request keeps that revision), else a new one; it goes
   * back to the idle ones when its exchange closes (the SDK refuses one that is still serving). What
   * the handlers need of the caller comes with each request, in its auth info.
   */
  private async reusedServer(era: "modern" | "legacy", endpoint: string | undefined): Promise<Server> {
    const face = endpointFace(endpoint, await this.upstreamFace(endpoint, era));
    // One face per era and endpoint is kept: an upstream whose identity changes on every probe (a
    // nonce, a timestamp) replaces its idle servers instead of adding a set per answer.
    const slot = `${era}\0${endpoint ?? ""}`;
    const key = `${slot}\0${createHash("sha256").update(JSON.stringify(face)).digest("base64url")}`;
    const kept = this.keptFaces.get(slot);
    if (kept !== key) {
      if (kept !== undefined) this.idle.delete(kept);
      this.keptFaces.set(slot, key);
    }
    let server = this.idle.get(key)?.pop();
    if (!server) {
      server = createGatewayServer(this.services, endpoint, face);
      this.serversMade++;
    }
    const reused = server;
    reused.onclose = () => {
      if (reused.transport !== undefined || this.keptFaces.get(slot) !== key) return;
      const idle = this.idle.get(key) ?? [];
      if (idle.length < MAX_IDLE_SERVERS) idle.push(reused);
      this.idle.set(key, idle);
    };
    return reused;
  }

  /**
   * What `/mcp/{server}` mirrors to a client of `era`: the capabilities, identity and instructions the
   * server's last probe recorded — a 2025 client those of the server's 2025 surface, when it speaks
   * both eras — else (an older catalogue) its warm session's. A thread-scoped, unavailable or
   * unreachable server offers tools.
   */
  private async upstreamFace(
    endpoint: string | undefined,
    era: "modern" | "legacy",
  ): Promise<UpstreamFace | undefined> {
    if (endpoint === undefined) return undefined;
    const entry = (await this.services.deps.directory.snapshot()).byName.get(endpoint);
    if (entry?.profile) return era === "legacy" ? (entry.profile.legacy ?? entry.profile) : entry.profile;
    // A per-user server has no connection of its own to ask (each caller's is theirs).
    if (!entry || !isAvailable(entry) || isThreadScoped(entry) || isPerUser(entry.server))
      return { capabilities: {} };
    try {
      // Bounded as a probe's profile is: an upstream could report megabytes.
      return await withServerSession(this.services.deps, entry, async (session) =>
        boundedFace({
          capabilities: session.client.getServerCapabilities() ?? {},
          serverInfo: session.client.getServerVersion(),
          instructions: session.client.getInstructions(),
        }),
      );
    } catch {
      return { capabilities: {} };
    }
  }
}

/** True for a tool set's endpoint hearing of tools (a set has no prompts or resources). */
function isToolsetEndpoint(endpoint: string, kind: ChangeKind): boolean {
  return kind === "tools" && toolsetOfEndpoint(endpoint) !== undefined;
}

function isToolCall(body: unknown): boolean {
  return (body as { method?: unknown } | undefined)?.method === "tools/call";
}

/**
 * A 2026 caller's `Mcp-Param-*` headers (or their absence) go to the upstream verbatim, and the
 * upstream checks them against the arguments; its HeaderMismatch (-32020) answer is about the
 * caller's request, so it gets the HTTP 400 SEP-2243 asks for (the SDK answers a handler's error
 * with 200).
 */
async function headerMismatchAsBadRequest(response: Response): Promise<Response> {
  if (response.status !== 200 || !(response.headers.get("content-type") ?? "").includes("application/json"))
    return response;
  const text = await response.text();
  const mismatch =
    text.includes(String(HEADER_MISMATCH)) &&
    (JSON.parse(text) as { error?: { code?: unknown } }).error?.code === HEADER_MISMATCH;
  return new Response(text, { status: mismatch ? 400 : 200, headers: response.headers });
}

function acceptsEventStream(request: Request): boolean {
  return (request.headers.get("accept") ?? "").includes("text/event-stream");
}

function methodNotAllowed(): Response {
  const body = {
    jsonrpc: "2.0",
    error: { code: -32000, message: "Method not allowed: open a session (initialize) first, or use POST." },
    id: null,
  };
  return new Response(JSON.stringify(body), {
    status: 405,
    headers: { "content-type": "application/json", allow: "POST" },
  });
}

/** The capabilities `/mcp` serves (exported for tests). */
export const AGGREGATE_CAPABILITIES: ServerCapabilities = endpointCapabilities(undefined);
