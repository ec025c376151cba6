/**
 * tools/list and tools/call on a gateway MCP server: `<server>__<tool>` on `/mcp`, the upstream's own
 * names on `/mcp/{server}`. A 2025 caller is asked what an upstream asks directly; a 2026 caller only
 * through `input_required`, so such a call is parked between its rounds.
 */
import { randomUUID } from "node:crypto";
import { AppError, asListed, parseQualifiedName, qualifyToolName, RPC } from "@mcpgw/core";
import {
  type CallContext,
  CallFailure,
  type InputRequired,
  type ToolCallResult,
  type UpstreamAsk,
} from "@mcpgw/upstream";
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  ProtocolError,
  type ServerContext,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/server";
import { AuthorizationNeeded, authorizationNeededResult } from "./authorization-needed";
import { callGatewayTool } from "./call";
import { audited, type CallNote, callNote, mcpPlane } from "./call-audit";
import { type CatalogTool, listTools as listCatalogTools } from "./catalogue";
import { toMcpError } from "./mcp-errors";
import { gatewayUri } from "./mcp-names";
import type { ParkedCall, RoundOutcome } from "./mcp-parking";
import {
  AUTHORIZATION_ROUND,
  callContext,
  callerEra,
  callerOf,
  finish,
  type GatewayServer,
  isModern,
  paginate,
  type RoundState,
  roundOf,
  withRound,
} from "./mcp-request";
import { setListing, setTarget, setTools } from "./mcp-toolset";
import {
  CALL_TOOL,
  callToolArguments,
  chooseToolMode,
  DEFAULT_SEARCH_MODE_THRESHOLD,
  SEARCH_MODE_TOOLS,
  SEARCH_TOOLS,
  searchTools,
  type ToolMode,
} from "./search-mode";
import { toolGate } from "./tool-access";

/** The 2025 JSON-RPC error an upstream answers when the user must first open a link. */
const URL_ELICITATION_REQUIRED = -32042;

/**
 * The tools the caller may use on this endpoint, a page at a time; in search mode, `search_tools` and
 * `call_tool` instead.
 */
export async function listTools(gateway: GatewayServer, cursor: string | undefined, ctx: ServerContext) {
  const read = visibleOnce(gateway, ctx);
  if ((await toolModeOf(gateway, ctx, async () => (await read()).tools.length)) === "search")
    return { tools: SEARCH_MODE_TOOLS };
  const { page, nextCursor } = paginate((await read()).tools, cursor);
  return { tools: page, ...(nextCursor ? { nextCursor } : {}) };
}

/**
 * A tool call. In search mode `search_tools` searches the caller's catalogue and `call_tool` makes the
 * call it names as a direct call of that name is made — same scope, checks and errors.
 */
export async function callTool(
  gateway: GatewayServer,
  name: string,
  args: Record<string, unknown>,
  ctx: ServerContext,
) {
  if (name === SEARCH_TOOLS || name === CALL_TOOL) {
    const read = visibleOnce(gateway, ctx);
    if ((await toolModeOf(gateway, ctx, async () => (await read()).tools.length)) === "search") {
      if (name === CALL_TOOL) {
        const call = callToolArguments(args);
        return callListedTool(gateway, call.name, call.arguments, ctx);
      }
      // Indexed by what this caller sees here: a set's overrides, /mcp/{server}'s own names.
      return searchTools(gateway.services.indexes, (await read()).tools, args);
    }
  }
  return callListedTool(gateway, name, args, ctx);
}

/**
 * The tools the caller may see on this endpoint, as it lists them (a set's under its overrides,
 * `/mcp/{server}`'s under their own names).
 */
async function visibleTools(gateway: GatewayServer, ctx: ServerContext): Promise<{ tools: ListedTool[] }> {
  const { scope, principal } = callerOf(ctx);
  const { deps } = gateway.services;
  const all = await listCatalogTools(deps, { scope, gate: await toolGate(deps, principal) });
  if (gateway.toolset !== undefined) {
    const listing = await setListing(deps, gateway.toolset);
    return { tools: setTools(listing, all, (tool) => mcpTool(undefined, tool)) as ListedTool[] };
  }
  const visible = gateway.endpoint ? all.filter((tool) => tool.server === gateway.endpoint) : all;
  return { tools: visible.map((tool) => mcpTool(gateway.endpoint, tool)) };
}

/** {@link visibleTools}, read once, and only if the mode or the answer needs it (a fixed mode does not). */
function visibleOnce(gateway: GatewayServer, ctx: ServerContext): () => ReturnType<typeof visibleTools> {
  let visible: ReturnType<typeof visibleTools> | undefined;
  return () => {
    visible ??= visibleTools(gateway, ctx);
    return visible;
  };
}

/** A tool as an endpoint lists it. */
type ListedTool = ReturnType<typeof mcpTool>;

/**
 * This request's tool mode: a session's once chosen; else the client's `?mode=`; else, on `/mcp`,
 * search past SEARCH_MODE_THRESHOLD tools. A 2025 session keeps the mode it is first served in.
 */
async function toolModeOf(
  gateway: GatewayServer,
  ctx: ServerContext,
  count: () => Promise<number>,
): Promise<ToolMode> {
  const requested = callerOf(ctx).mode;
  const automatic = gateway.endpoint === undefined;
  // The catalogue is counted only when the mode depends on it.
  const tools = gateway.mode || requested || !automatic ? 0 : await count();
  const mode = chooseToolMode({
    fixed: gateway.mode,
    requested,
    automatic,
    tools,
    threshold: gateway.services.deps.searchModeThreshold ?? DEFAULT_SEARCH_MODE_THRESHOLD,
  });
  if (gateway.session) gateway.mode = mode;
  return mode;
}

/**
 * A 2025 session's tool mode, chosen as it opens (from the catalogue then, for an automatic one). A
 * catalogue that cannot be read now leaves it to the session's first listing.
 */
export async function fixToolMode(gateway: GatewayServer, ctx: ServerContext): Promise<void> {
  try {
    await toolModeOf(gateway, ctx, async () => (await visibleTools(gateway, ctx)).tools.length);
  } catch {
    // The session opens regardless; its first listing or call chooses.
  }
}

/** A tool call routed to its server, audited as one event (a refusal before it too). */
function callListedTool(
  gateway: GatewayServer,
  name: string,
  args: Record<string, unknown>,
  ctx: ServerContext,
) {
  const caller = callerOf(ctx);
  const note: CallNote = {
    plane: mcpPlane({ toolset: gateway.toolset, server: gateway.endpoint }),
    source: caller.source,
    toolset: gateway.toolset,
    ...(gateway.endpoint ? { serverName: gateway.endpoint } : {}),
    tool: name,
  };
  return audited(gateway.services.deps, note, caller.principal, args, () =>
    routeListedTool(gateway, name, args, ctx, note),
  );
}

/** A tool call routed to its server; a 2026 caller's call is parked while the upstream asks. */
async function routeListedTool(
  gateway: GatewayServer,
  name: string,
  args: Record<string, unknown>,
  ctx: ServerContext,
  note: CallNote,
) {
  const { deps, parking } = gateway.services;
  const caller = callerOf(ctx);
  const qualified =
    gateway.toolset !== undefined
      ? setTarget(await setListing(deps, gateway.toolset), gateway.toolset, name)
      : gateway.endpoint
        ? qualifyToolName(gateway.endpoint, name)
        : name;
  Object.assign(note, callNote(note, qualified));
  const server = gateway.endpoint ?? parseQualifiedName(qualified).server;
  const serverId = (await deps.directory.entry(server, () => true))?.server.id ?? "";
  if (serverId) note.serverId = serverId;
  const state = ctx.mcpReq.requestState<RoundState>();
  // The upstream's own state goes back only to the server that issued it.
  const round = roundOf(ctx, state, serverId);
  const call = (context: CallContext, signal: AbortSignal) =>
    callGatewayTool(deps, qualified, args, {
      scope: caller.scope,
      principal: caller.principal,
      signal,
      context,
      note,
      ...withRound(round),
      ...callerEra(ctx),
    }).catch((error: unknown) => authorizationAnswer(gateway, error, ctx));
  if (!isModern(ctx)) {
    const asked = (ask: UpstreamAsk) => ctx.mcpReq.send(ask as never) as Promise<Record<string, unknown>>;
    return finish(gateway, await call(callContext(gateway, ctx, asked), ctx.mcpReq.signal), ctx, serverId);
  }
  // A 2026 caller can only be asked through input_required: a 2025 upstream's question parks the call.
  if (state && "p" in state) {
    const parked = parking.get<ToolCallResult | InputRequired>(state.p);
    if (!parked) {
      throw toMcpError(
        new AppError(
          "mcp.round_expired",
          "The call waiting for these answers is gone (expired, or held by another gateway instance); call the tool again.",
        ),
      );
    }
    parked.relay = callContext(gateway, ctx);
    parked.answer(ctx.mcpReq.inputResponses);
    return settleParked(gateway, parked, ctx, serverId);
  }
  const parked: ParkedCall<ToolCallResult | InputRequired> = parking.start(
    (ask, signal) =>
      call(
        relayed(() => parked.relay, ask),
        signal,
      ),
    callContext(gateway, ctx),
  );
  return settleParked(gateway, parked, ctx, serverId);
}

/**
 * What a caller must do at a URL before the call can go on, asked the way the caller's client can be:
 * a per-user server the caller has not authorized at (the gateway's own link), or an upstream's -32042
 * URL-elicitation error. A 2026 client that takes URL elicitations gets `input_required` (its retry is a
 * fresh call); a 2025 one the -32042 error (the upstream's passes as sent). Otherwise the gateway's link
 * comes as a tool result with the link, and an upstream's -32042 — which 2026-07-28 does not have — as
 * an error saying what the upstream asked. Any other error goes on.
 */
function authorizationAnswer(
  gateway: GatewayServer,
  error: unknown,
  ctx: ServerContext,
): ToolCallResult | InputRequired {
  const asked = error instanceof AuthorizationNeeded ? undefined : upstreamUrlElicitations(error);
  if (!(error instanceof AuthorizationNeeded) && !asked) throw error;
  const modern = isModern(ctx);
  if (asked && !modern) throw error;
  const capabilities = (
    modern
      ? (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY]
      : gateway.server.getClientCapabilities()
  ) as { elicitation?: { url?: unknown } } | undefined;
  if (asked) {
    if (!capabilities?.elicitation?.url) {
      throw new ProtocolError(
        RPC.INTERNAL_ERROR,
        `The upstream asks the user to open a link (URL elicitation), which this client did not declare it can do: ${asked.message}`,
      );
    }
    return askAtUrls(asked.elicitations);
  }
  if (!(error instanceof AuthorizationNeeded)) throw error;
  if (!capabilities?.elicitation?.url) return authorizationNeededResult(error);
  const elicitation = {
    mode: "url" as const,
    message: error.message,
    url: error.link.authorizationUrl,
    elicitationId: randomUUID(),
  };
  if (!modern) throw new UrlElicitationRequiredError([elicitation], error.message);
  return askAtUrls([elicitation]);
}

/** `input_required` asking the caller to open each URL; the answer's retry is a fresh call. */
function askAtUrls(elicitations: readonly Record<string, unknown>[]): InputRequired {
  const inputRequests = Object.fromEntries(
    elicitations.map((params, index) => [
      typeof params.elicitationId === "string" ? params.elicitationId : `url-${index}`,
      { method: "elicitation/create", params: { ...params, mode: "url" } },
    ]),
  );
  return { resultType: "input_required", inputRequests, requestState: AUTHORIZATION_ROUND } as InputRequired;
}

/** An upstream's -32042 URL-elicitation error behind `error`: its message and elicitations. */
function upstreamUrlElicitations(
  error: unknown,
): { message: string; elicitations: Record<string, unknown>[] } | undefined {
  const wire = error instanceof AppError || error instanceof CallFailure ? toMcpError(error) : undefined;
  if (wire?.code !== URL_ELICITATION_REQUIRED) return undefined;
  const elicitations = (wire.data as { elicitations?: unknown } | undefined)?.elicitations;
  if (!Array.isArray(elicitations) || elicitations.length === 0) return undefined;
  const plain = elicitations.filter(
    (item): item is Record<string, unknown> =>
      typeof item === "object" && item !== null && typeof (item as { url?: unknown }).url === "string",
  );
  return plain.length === elicitations.length ? { message: wire.message, elicitations: plain } : undefined;
}

/**
 * Waits for a parked call's next outcome (a caller leaving mid-round cancels it): its result, or
 * `input_required` with its questions and the call's id sealed as the state to echo.
 */
async function settleParked(
  gateway: GatewayServer,
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
  if (outcome.kind === "result") return finish(gateway, outcome.value, ctx, serverId);
  return inputRequired({
    inputRequests: outcome.inputRequests as never,
    requestState: await gateway.services.codec.mint({ p: parked.id }, ctx),
  });
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
 * A catalogued tool as the endpoint lists it: the upstream's name on `/mcp/{server}`, else qualified;
 * one the upstream runs only as a task, as plainly callable ({@link asListed}).
 */
function mcpTool(endpoint: string | undefined, tool: CatalogTool) {
  const definition = asListed(tool.definition);
  if (endpoint) return { ...definition, name: tool.upstreamName };
  return { ...definition, name: tool.name, ...withGatewayUiUri(tool.server, definition._meta) };
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
