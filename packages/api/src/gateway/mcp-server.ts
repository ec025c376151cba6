/**
 * The MCP server the gateway is to its clients, an SDK `Server` per stateless exchange at a time
 * (2026-07-28 and sessionless 2025 requests; reused from one to the next) or per session (2025): `/mcp` aggregates every server the caller may use — tools as `<server>__<tool>`,
 * prompts as `<server>__<prompt>`, resources under gateway URIs — and `/mcp/{server}` fronts one
 * server under its own names. Everything is forwarded whole; what an upstream sends mid-call
 * (progress, logs, questions for the user or the model) reaches the caller in its own era.
 */
import { randomUUID } from "node:crypto";
import { AppError, errorFields, parseQualifiedName, qualifyToolName, RPC } from "@mcpgw/core";
import type {
  CallContext,
  InputRequired,
  InputRound,
  LogLevel,
  ToolCallResult,
  UpstreamAsk,
} from "@mcpgw/upstream";
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  type jsonSchemaValidator,
  LOG_LEVEL_META_KEY,
  type RequestStateCodec,
  ResourceNotFoundError,
  Server,
  type ServerCapabilities,
  type ServerContext,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/server";
import type { Principal } from "../env";
import { type DirectoryEntry, isAvailable } from "./directory";
import { decodeCursor, encodeCursor, toMcpError } from "./mcp-errors";
import {
  gatewayPromptName,
  gatewayUri,
  gatewayUriTemplate,
  parseGatewayPromptName,
  parseGatewayUri,
} from "./mcp-names";
import type { ParkedCall, ParkedCalls, RoundOutcome } from "./mcp-parking";
import type { LegacySessions } from "./mcp-sessions";
import {
  AuthorizationNeeded,
  authorizationNeededResult,
  type CatalogTool,
  callGatewayTool,
  forwardToServer,
  type GatewayDeps,
  inScope,
  isThreadScoped,
  listTools,
  type ServerScope,
} from "./service";

/** The request state of the gateway's own question to a caller who must authorize at an upstream. */
const AUTHORIZATION_ROUND = "mcpgw:authorize-upstream";

/** Items per page of every list the gateway paginates itself. */
export const MCP_PAGE_SIZE = 100;
/** Pages read from one upstream for an aggregated list (a server that pages forever stops there). */
const MAX_UPSTREAM_PAGES = 20;

/** Who is asking, on which endpoint: what every handler reads (from the request's auth info). */
export interface McpCaller {
  principal: Principal;
  /** `admin`, or the key's id: what request state and sessions are bound to. */
  principalKey: string;
  scope: ServerScope;
}

/** What the handlers share across requests. */
export interface McpServices {
  deps: GatewayDeps;
  parking: ParkedCalls;
  /** Seals the state a caller echoes on its retry (what the upstream needs back, or a parked call). */
  codec: RequestStateCodec<RoundState>;
  sessions: LegacySessions;
  /** One JSON-schema validator for every SDK server instance (compiling one per request is costly). */
  validator: jsonSchemaValidator;
}

/** The gateway's sealed `requestState`: a parked call's id, or the server and its own state. */
export type RoundState = { p: string } | { s: string; u?: string };

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
  const handlers = new Handlers(services, server, endpoint);
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

  on("tools/list", (params, ctx) => handlers.listTools(params.cursor, ctx));
  on("tools/call", (params, ctx) => handlers.callTool(params.name, params.arguments ?? {}, ctx));
  if (capabilities.resources) {
    on("resources/list", (params, ctx) => handlers.list("resources/list", "resources", params.cursor, ctx));
    on("resources/templates/list", (params, ctx) =>
      handlers.list("resources/templates/list", "resourceTemplates", params.cursor, ctx),
    );
    on("resources/read", (params, ctx) => handlers.readResource(params.uri, ctx));
    if (capabilities.resources.subscribe) {
      on("resources/subscribe", (params, ctx) => handlers.subscribe("resources/subscribe", params.uri, ctx));
      on("resources/unsubscribe", (params, ctx) =>
        handlers.subscribe("resources/unsubscribe", params.uri, ctx),
      );
    }
  }
  if (capabilities.prompts) {
    on("prompts/list", (params, ctx) => handlers.list("prompts/list", "prompts", params.cursor, ctx));
    on("prompts/get", (params, ctx) =>
      handlers.getPrompt(params.name, params.arguments as Record<string, string>, ctx),
    );
  }
  if (capabilities.completions) {
    on("completion/complete", (params, ctx) =>
      handlers.complete(params as unknown as Record<string, unknown>, ctx),
    );
  }
  if (capabilities.logging) on("logging/setLevel", (params, ctx) => handlers.setLevel(params.level, ctx));
  return server;
}

type ListKey = "resources" | "resourceTemplates" | "prompts";

/** The request params the handlers read (the SDK has validated their shape per method). */
interface Params {
  cursor?: string;
  name: string;
  uri: string;
  level: string;
  arguments?: Record<string, unknown>;
}

/** The handlers of one SDK server instance. */
class Handlers {
  private readonly deps: GatewayDeps;

  constructor(
    private readonly services: McpServices,
    private readonly server: Server,
    private readonly endpoint: string | undefined,
  ) {
    this.deps = services.deps;
  }

  async listTools(cursor: string | undefined, ctx: ServerContext) {
    const { scope } = callerOf(ctx);
    const all = await listTools(this.deps, { scope });
    const visible = this.endpoint ? all.filter((tool) => tool.server === this.endpoint) : all;
    const { page, nextCursor } = paginate(visible, cursor);
    return { tools: page.map((tool) => this.mcpTool(tool)), ...(nextCursor ? { nextCursor } : {}) };
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: ServerContext) {
    const caller = callerOf(ctx);
    const qualified = this.endpoint ? qualifyToolName(this.endpoint, name) : name;
    const server = this.endpoint ?? parseQualifiedName(qualified).server;
    const serverId = (await this.deps.directory.snapshot()).byName.get(server)?.server.id ?? "";
    const state = ctx.mcpReq.requestState<RoundState>();
    // The upstream's own state goes back only to the server that issued it.
    const round = roundOf(ctx, state, serverId);
    const call = (context: CallContext, signal: AbortSignal) =>
      callGatewayTool(this.deps, qualified, args, {
        scope: caller.scope,
        principal: caller.principal,
        signal,
        context,
        ...withRound(round),
      }).catch((error: unknown) => this.authorizationAnswer(error, ctx));
    if (!this.isModern(ctx)) {
      const asked = (ask: UpstreamAsk) => ctx.mcpReq.send(ask as never) as Promise<Record<string, unknown>>;
      return this.finish(await call(this.context(ctx, asked), ctx.mcpReq.signal), ctx, serverId);
    }
    // A 2026 caller can only be asked through input_required: a 2025 upstream's question parks the call.
    if (state && "p" in state) {
      const parked = this.services.parking.get<ToolCallResult | InputRequired>(state.p);
      if (!parked) {
        throw toMcpError(
          new AppError(
            "mcp.round_expired",
            "The call waiting for these answers is gone (expired, or held by another gateway instance); call the tool again.",
          ),
        );
      }
      parked.relay = this.context(ctx);
      parked.answer(ctx.mcpReq.inputResponses);
      return this.settleParked(parked, ctx, serverId);
    }
    const parked: ParkedCall<ToolCallResult | InputRequired> = this.services.parking.start(
      (ask, signal) =>
        call(
          relayed(() => parked.relay, ask),
          signal,
        ),
      this.context(ctx),
    );
    return this.settleParked(parked, ctx, serverId);
  }

  /**
   * A per-user server the caller has not authorized at, asked the way the caller's client can be: a
   * URL-mode elicitation — `input_required` for a 2026 client (its retry is a fresh call), -32042 for a
   * 2025 one — when it takes them, else a tool result with the link. Any other error goes on.
   */
  private authorizationAnswer(error: unknown, ctx: ServerContext): ToolCallResult | InputRequired {
    if (!(error instanceof AuthorizationNeeded)) throw error;
    const modern = this.isModern(ctx);
    const capabilities = (
      modern
        ? (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY]
        : this.server.getClientCapabilities()
    ) as { elicitation?: { url?: unknown } } | undefined;
    if (!capabilities?.elicitation?.url) return authorizationNeededResult(error);
    const elicitation = {
      mode: "url" as const,
      message: error.message,
      url: error.link.authorizationUrl,
      elicitationId: randomUUID(),
    };
    if (!modern) throw new UrlElicitationRequiredError([elicitation], error.message);
    return {
      resultType: "input_required",
      inputRequests: { authorize: { method: "elicitation/create", params: elicitation } },
      requestState: AUTHORIZATION_ROUND,
    } as InputRequired;
  }

  /** Lists of resources, templates or prompts: one server's as it pages them, or all, named for `/mcp`. */
  async list(method: string, key: ListKey, cursor: string | undefined, ctx: ServerContext) {
    const caller = callerOf(ctx);
    if (this.endpoint) {
      const entry = await this.entry(this.endpoint, caller.scope);
      return this.forward(entry, method, cursor ? { cursor } : {}, ctx);
    }
    const capability = key === "prompts" ? "prompts" : "resources";
    const entries = await this.aggregated(caller.scope, capability);
    const lists = await Promise.all(
      entries.map(async (entry) => {
        try {
          const items = await this.allPages(entry, method, key, ctx);
          return items.map((item) => renamed(entry.server.name, key, item));
        } catch (error) {
          // Best effort, like tools: one failing server never hides the others'.
          this.deps.logger.warn("aggregated list skipped a server", {
            server: entry.server.name,
            method,
            error: String(error),
          });
          return [];
        }
      }),
    );
    const { page, nextCursor } = paginate(lists.flat(), cursor);
    return { [key]: page, ...(nextCursor ? { nextCursor } : {}) };
  }

  async readResource(uri: string, ctx: ServerContext) {
    // A URI of no server's (not in the gateway's form) is a resource that does not exist here.
    if (!this.endpoint && !parseGatewayUri(uri))
      throw new ResourceNotFoundError(uri, `Resource ${uri.slice(0, 200)} not found`);
    const { entry, name } = await this.target(uri, parseGatewayUri, ctx);
    const result = (await this.forwardRound(entry, "resources/read", { uri: name }, ctx)) as Record<
      string,
      unknown
    >;
    if (this.endpoint || !Array.isArray(result.contents)) return result;
    const contents = (result.contents as Array<Record<string, unknown>>).map((content) =>
      typeof content.uri === "string"
        ? { ...content, uri: gatewayUri(entry.server.name, content.uri) }
        : content,
    );
    return { ...result, contents };
  }

  async getPrompt(name: string, args: Record<string, string> | undefined, ctx: ServerContext) {
    const parse = (gatewayName: string) => {
      const parsed = parseGatewayPromptName(gatewayName);
      return parsed ? { server: parsed.server, uri: parsed.name } : undefined;
    };
    const { entry, name: own } = await this.target(name, parse, ctx);
    return this.forwardRound(entry, "prompts/get", { name: own, ...(args ? { arguments: args } : {}) }, ctx);
  }

  /** Completions go to the server whose prompt or resource template they complete. */
  async complete(params: Record<string, unknown>, ctx: ServerContext) {
    const ref = (params.ref ?? {}) as { type?: string; name?: string; uri?: string };
    if (this.endpoint) {
      const entry = await this.entry(this.endpoint, callerOf(ctx).scope);
      return this.forward(entry, "completion/complete", params, ctx);
    }
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      const { entry, name } = await this.target(
        ref.name,
        (n) => {
          const parsed = parseGatewayPromptName(n);
          return parsed ? { server: parsed.server, uri: parsed.name } : undefined;
        },
        ctx,
      );
      return this.forward(entry, "completion/complete", { ...params, ref: { ...ref, name } }, ctx);
    }
    if (ref.type === "ref/resource" && typeof ref.uri === "string") {
      const { entry, name } = await this.target(ref.uri, parseGatewayUri, ctx);
      return this.forward(entry, "completion/complete", { ...params, ref: { ...ref, uri: name } }, ctx);
    }
    throw toMcpError(
      new AppError("request.invalid", "completion/complete needs a ref/prompt or ref/resource reference."),
    );
  }

  /** A 2025 client's log level: kept for its session, and (on `/mcp/{server}`) passed to the upstream. */
  async setLevel(level: string, ctx: ServerContext) {
    const session = this.services.sessions.byServer(this.server);
    if (session) session.logLevel = level;
    if (this.endpoint) {
      const entry = await this.entry(this.endpoint, callerOf(ctx).scope);
      await forwardToServer(
        this.deps,
        entry,
        "logging/setLevel",
        { level },
        {
          ...this.forwardOptions(ctx),
          authorize: false,
        },
      ).catch(() => undefined);
    }
    return {};
  }

  /** A 2025 client's resource subscription: kept for its session and passed to the upstream. */
  async subscribe(method: "resources/subscribe" | "resources/unsubscribe", uri: string, ctx: ServerContext) {
    const { entry, name } = await this.target(uri, parseGatewayUri, ctx);
    const session = this.services.sessions.byServer(this.server);
    if (method === "resources/subscribe") session?.subscriptions.add(uri);
    else session?.subscriptions.delete(uri);
    // A 2026 upstream has no resources/subscribe (its listen stream carries updates): kept here only.
    const upstream = entry.profile?.capabilities?.resources as { subscribe?: boolean } | undefined;
    if (upstream?.subscribe && speaksLegacy(entry))
      await forwardToServer(
        this.deps,
        entry,
        method,
        { uri: name },
        { ...this.forwardOptions(ctx), authorize: false },
      );
    return {};
  }

  // ---------------------------------------------------------------------------------------------

  private mcpTool(tool: CatalogTool) {
    const { definition } = tool;
    if (this.endpoint) return { ...definition, name: tool.upstreamName };
    return { ...definition, name: tool.name, ...withGatewayUiUri(tool.server, definition._meta) };
  }

  private isModern(ctx: ServerContext): boolean {
    return ctx.mcpReq.envelope !== undefined;
  }

  /** The caller's side of a call: its capabilities, log level, progress and log channels, and asks. */
  private context(
    ctx: ServerContext,
    ask?: (request: UpstreamAsk) => Promise<Record<string, unknown>>,
  ): CallContext {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const modern = this.isModern(ctx);
    const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
    const logLevel = modern
      ? (envelope[LOG_LEVEL_META_KEY] as LogLevel | undefined)
      : ((this.services.sessions.byServer(this.server)?.logLevel as LogLevel | undefined) ?? "debug");
    const paramHeaders = modern ? mcpParamHeaders(ctx.http?.req) : undefined;
    return {
      ...(paramHeaders ? { paramHeaders } : {}),
      clientCapabilities: (modern
        ? envelope[CLIENT_CAPABILITIES_META_KEY]
        : this.server.getClientCapabilities()) as Record<string, unknown> | undefined,
      ...(logLevel ? { logLevel } : {}),
      ...(progressToken !== undefined
        ? {
            onProgress: (progress) =>
              void ctx.mcpReq
                .notify({ method: "notifications/progress", params: { ...progress, progressToken } })
                .catch(() => undefined),
          }
        : {}),
      ...(logLevel
        ? {
            onLog: (params) => {
              if (atLeast(params.level, logLevel))
                void ctx.mcpReq.notify({ method: "notifications/message", params }).catch(() => undefined);
            },
          }
        : {}),
      ...(ask ? { ask } : {}),
    };
  }

  /** A request forwarded as it is; the upstream's answer whole. */
  private forward(
    entry: DirectoryEntry,
    method: string,
    params: Record<string, unknown>,
    ctx: ServerContext,
  ) {
    return forwardToServer(this.deps, entry, method, params, this.forwardOptions(ctx));
  }

  private forwardOptions(ctx: ServerContext) {
    return { signal: ctx.mcpReq.signal, context: this.context(ctx), principal: callerOf(ctx).principal };
  }

  /** Forwards a request that may need input (resources/read, prompts/get), sealing the upstream's state. */
  private async forwardRound(
    entry: DirectoryEntry,
    method: string,
    params: Record<string, unknown>,
    ctx: ServerContext,
  ) {
    const state = ctx.mcpReq.requestState<RoundState>();
    const result = await forwardToServer(this.deps, entry, method, params, {
      ...this.forwardOptions(ctx),
      ...withRound(roundOf(ctx, state, entry.server.id)),
    });
    return this.finish(result, ctx, entry.server.id);
  }

  /** A result as the caller gets it; an upstream's input_required with its state sealed to this caller. */
  private async finish(
    result: Record<string, unknown> | ToolCallResult | InputRequired,
    ctx: ServerContext,
    serverId?: string,
  ) {
    if (result.resultType !== "input_required") return result;
    const { inputRequests, requestState } = result as InputRequired;
    const id = serverId ?? "";
    return inputRequired({
      ...(inputRequests ? { inputRequests: inputRequests as never } : {}),
      requestState: await this.services.codec.mint(
        { s: id, ...(requestState !== undefined ? { u: requestState } : {}) },
        ctx,
      ),
    });
  }

  /**
   * Waits for a parked call's next outcome (a caller leaving mid-round cancels it): its result, or
   * `input_required` with its questions and the call's id sealed as the state to echo.
   */
  private async settleParked(
    parked: ParkedCall<ToolCallResult | InputRequired>,
    ctx: ServerContext,
    serverId: string,
  ) {
    const cancel = () => parked.abandon("the caller cancelled the call");
    ctx.mcpReq.signal.addEventListener("abort", cancel, { once: true });
    let outcome: RoundOutcome<ToolCallResult | InputRequired>;
    try {
      outcome = await parked.next();
    } finally {
      ctx.mcpReq.signal.removeEventListener("abort", cancel);
    }
    if (outcome.kind === "error") throw toMcpError(outcome.error);
    if (outcome.kind === "result") return this.finish(outcome.value, ctx, serverId);
    return inputRequired({
      inputRequests: outcome.inputRequests as never,
      requestState: await this.services.codec.mint({ p: parked.id }, ctx),
    });
  }

  /** The server a gateway name (prompt name, resource URI) points at, and the server's own name for it. */
  private async target(
    gatewayName: string,
    parse: (name: string) => { server: string; uri: string } | undefined,
    ctx: ServerContext,
  ): Promise<{ entry: DirectoryEntry; name: string }> {
    const { scope } = callerOf(ctx);
    if (this.endpoint) return { entry: await this.entry(this.endpoint, scope), name: gatewayName };
    const parsed = parse(gatewayName);
    if (!parsed) {
      throw toMcpError(
        new AppError(
          "request.invalid",
          `'${gatewayName.slice(0, 200)}' names no server's prompt or resource on /mcp.`,
        ),
      );
    }
    return { entry: await this.entry(parsed.server, scope), name: parsed.uri };
  }

  /** A connected server in the caller's scope, by name. */
  private async entry(name: string, scope: ServerScope): Promise<DirectoryEntry> {
    const entry =
      (await this.deps.directory.snapshot()).byName.get(name) ??
      (await this.deps.directory.fresh()).byName.get(name);
    if (!entry || !inScope(scope, entry.server.id))
      throw toMcpError(new AppError("server.not_found", `No server named '${name}'.`));
    if (!isAvailable(entry)) {
      throw toMcpError(
        new AppError(
          "server.unavailable",
          `Server '${name}' is ${entry.server.enabled ? (entry.status?.state ?? "connecting") : "disabled"}.`,
        ),
      );
    }
    return entry;
  }

  /** The servers `/mcp` aggregates a capability of: connected, in scope, not thread-scoped. */
  private async aggregated(
    scope: ServerScope,
    capability: "resources" | "prompts",
  ): Promise<DirectoryEntry[]> {
    const snapshot = await this.deps.directory.snapshot();
    return [...snapshot.byName.values()]
      .filter((entry) => isAvailable(entry) && inScope(scope, entry.server.id) && !isThreadScoped(entry))
      .filter((entry) => !entry.profile || entry.profile.capabilities?.[capability] !== undefined)
      .sort((a, b) => (a.server.name < b.server.name ? -1 : 1));
  }

  private async allPages(entry: DirectoryEntry, method: string, key: ListKey, ctx: ServerContext) {
    const items: Array<Record<string, unknown>> = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < MAX_UPSTREAM_PAGES; pages++) {
      const page = await forwardToServer(this.deps, entry, method, cursor ? { cursor } : {}, {
        ...this.forwardOptions(ctx),
        authorize: false,
      });
      items.push(...((page[key] as Array<Record<string, unknown>> | undefined) ?? []));
      cursor = typeof page.nextCursor === "string" ? page.nextCursor : undefined;
      if (!cursor) break;
    }
    return items;
  }
}

/** A parked call's channels follow the request of its current round; its questions park it. */
function relayed(
  current: () => CallContext | undefined,
  ask: (request: UpstreamAsk) => Promise<Record<string, unknown>>,
): CallContext {
  return {
    onProgress: (progress) => current()?.onProgress?.(progress),
    onLog: (params) => current()?.onLog?.(params),
    get clientCapabilities() {
      return current()?.clientCapabilities;
    },
    get logLevel() {
      return current()?.logLevel;
    },
    get paramHeaders() {
      return current()?.paramHeaders;
    },
    ask,
  };
}

/**
 * The answers a retry carries, for the upstream: the caller's `inputResponses` as given, and the
 * upstream's own `requestState` only when the sealed state says this server issued it.
 */
function roundOf(
  ctx: ServerContext,
  state: RoundState | undefined,
  serverId: string,
): InputRound | undefined {
  const requestState = state && "s" in state && state.s === serverId ? state.u : undefined;
  // The answer to the gateway's own question (authorize at the upstream): the retry is a fresh call.
  if (requestState === AUTHORIZATION_ROUND) return undefined;
  const inputResponses = ctx.mcpReq.inputResponses;
  if (!inputResponses && requestState === undefined) return undefined;
  return {
    ...(inputResponses ? { inputResponses } : {}),
    ...(requestState !== undefined ? { requestState } : {}),
  };
}

function withRound(round: InputRound | undefined): { round?: InputRound } {
  return round ? { round } : {};
}

/** The request's `Mcp-Param-*` headers (SEP-2243), none or some. */
function mcpParamHeaders(request: Request | undefined): Record<string, string> | undefined {
  if (!request) return undefined;
  const found: Record<string, string> = {};
  for (const [name, value] of request.headers) if (name.startsWith("mcp-param-")) found[name] = value;
  return found;
}

/** The caller the endpoint put in the request's auth info. */
function callerOf(ctx: ServerContext): McpCaller {
  const caller = (ctx.http?.authInfo?.extra as { caller?: McpCaller } | undefined)?.caller;
  if (!caller) throw toMcpError(new AppError("auth.unauthorized", "No caller."));
  return caller;
}

/** A list item of one server as `/mcp` shows it: prompt names and resource URIs in gateway form. */
function renamed(server: string, key: ListKey, item: Record<string, unknown>): Record<string, unknown> {
  if (key === "prompts" && typeof item.name === "string")
    return { ...item, name: gatewayPromptName(server, item.name) };
  if (key === "resources" && typeof item.uri === "string")
    return { ...item, uri: gatewayUri(server, item.uri) };
  if (key === "resourceTemplates" && typeof item.uriTemplate === "string")
    return { ...item, uriTemplate: gatewayUriTemplate(server, item.uriTemplate) };
  return item;
}

/** A tool's MCP Apps UI resource as `/mcp` serves it: its URI in gateway form (`_meta.ui.resourceUri`). */
function withGatewayUiUri(server: string, meta: unknown): { _meta?: Record<string, unknown> } {
  if (!meta || typeof meta !== "object") return {};
  const record = meta as Record<string, unknown>;
  const ui = record.ui as { resourceUri?: unknown } | undefined;
  const rewritten: Record<string, unknown> = { ...record };
  if (ui && typeof ui.resourceUri === "string")
    rewritten.ui = { ...ui, resourceUri: gatewayUri(server, ui.resourceUri) };
  if (typeof record["ui/resourceUri"] === "string")
    rewritten["ui/resourceUri"] = gatewayUri(server, record["ui/resourceUri"]);
  return { _meta: rewritten };
}

/** True for a server whose last probe spoke a 2025 revision (or that has no recorded profile yet). */
function speaksLegacy(entry: DirectoryEntry): boolean {
  return !entry.profile || entry.profile.protocolVersion < "2026-07-28";
}

/** A page of `items` from an offset cursor. */
function paginate<T>(items: T[], cursor: string | undefined): { page: T[]; nextCursor?: string } {
  const offset = decodeCursor(cursor);
  const page = items.slice(offset, offset + MCP_PAGE_SIZE);
  const next = offset + MCP_PAGE_SIZE < items.length ? encodeCursor(offset + MCP_PAGE_SIZE) : undefined;
  return { page, ...(next ? { nextCursor: next } : {}) };
}

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** True when a log message of `level` passes a `threshold`. */
function atLeast(level: unknown, threshold: string): boolean {
  const at = LEVELS.indexOf(String(level));
  return at === -1 || at >= LEVELS.indexOf(threshold);
}
