/**
 * One request on a gateway MCP server: who asks ({@link McpCaller}), the caller's side of the call
 * (capabilities, log level, progress and log channels), forwarding to an upstream, and the rounds of
 * a request that needs input — the upstream's state sealed to the caller and checked on its retry.
 */
import { AppError } from "@mcpgw/core";
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
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Principal } from "../env";
import { forwardToServer } from "./call";
import type { ServerScope } from "./catalogue";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";
import { decodeCursor, encodeCursor, toMcpError } from "./mcp-errors";
import type { ParkedCalls } from "./mcp-parking";
import type { LegacySessions } from "./mcp-sessions";
import type { ToolIndexCache, ToolMode } from "./search-mode";

/** The request state of the gateway's own question to a caller who must authorize at an upstream. */
export const AUTHORIZATION_ROUND = "mcpgw:authorize-upstream";

/** Items per page of every list the gateway paginates itself. */
export const MCP_PAGE_SIZE = 100;

/** Who is asking, on which endpoint: what every handler reads (from the request's auth info). */
export interface McpCaller {
  principal: Principal;
  /** `admin`, or the key's id: what request state and sessions are bound to. */
  principalKey: string;
  scope: ServerScope;
  /** The tool mode the client asked for (`?mode=`); none: the endpoint decides. */
  mode?: ToolMode | undefined;
  /** The client's address (for the audit trail). */
  source?: string | undefined;
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
  /** Search mode's text indexes, one per catalogue snapshot and scope. */
  indexes: ToolIndexCache;
}

/**
 * The gateway's sealed `requestState`: a parked call's id, or the server, its own state and the
 * gateway's answers for the caller to go with the caller's (`a`, {@link InputRequired}'s `answered`).
 */
export type RoundState = { p: string } | { s: string; u?: string; a?: Record<string, unknown> };

/** One SDK server instance the handlers answer for: `/mcp` (no endpoint) or `/mcp/{endpoint}`. */
export interface GatewayServer {
  services: McpServices;
  server: Server;
  endpoint: string | undefined;
  /** Serves one 2025 session: its tool mode, once chosen, stays. */
  session?: boolean;
  /** The session's tool mode, fixed at its first listing or search-mode call. */
  mode?: ToolMode;
  /** The tool set `/mcp/sets/{toolset}` serves (then `endpoint` is undefined). */
  toolset?: string | undefined;
}

/** The caller the endpoint put in the request's auth info. */
export function callerOf(ctx: ServerContext): McpCaller {
  const caller = (ctx.http?.authInfo?.extra as { caller?: McpCaller } | undefined)?.caller;
  if (!caller) throw toMcpError(new AppError("auth.unauthorized", "No caller."));
  return caller;
}

/** True for a 2026-07-28 request (it carries the `_meta` envelope). */
export function isModern(ctx: ServerContext): boolean {
  return ctx.mcpReq.envelope !== undefined;
}

/** The caller's side of a call: its capabilities, log level, progress and log channels, and asks. */
export function callContext(
  gateway: GatewayServer,
  ctx: ServerContext,
  ask?: (request: UpstreamAsk) => Promise<Record<string, unknown>>,
): CallContext {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const modern = isModern(ctx);
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const logLevel = modern
    ? (envelope[LOG_LEVEL_META_KEY] as LogLevel | undefined)
    : ((gateway.services.sessions.byServer(gateway.server)?.logLevel as LogLevel | undefined) ?? "debug");
  const paramHeaders = modern ? mcpParamHeaders(ctx.http?.req) : undefined;
  return {
    ...(paramHeaders ? { paramHeaders } : {}),
    clientCapabilities: (modern
      ? envelope[CLIENT_CAPABILITIES_META_KEY]
      : gateway.server.getClientCapabilities()) as Record<string, unknown> | undefined,
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

/**
 * What every forwarded request carries: the caller's signal, side of the call and principal, and its
 * era when 2025 (a dual-era server serves it over its 2025 session).
 */
export function forwardOptions(gateway: GatewayServer, ctx: ServerContext) {
  return {
    signal: ctx.mcpReq.signal,
    context: callContext(gateway, ctx),
    principal: callerOf(ctx).principal,
    ...callerEra(ctx),
  };
}

/** A 2025 caller's era, as call options carry it (none for a 2026 caller). */
export function callerEra(ctx: ServerContext): { era?: "legacy" } {
  return isModern(ctx) ? {} : { era: "legacy" };
}

/** A request forwarded as it is; the upstream's answer whole. */
export function forward(
  gateway: GatewayServer,
  entry: DirectoryEntry,
  method: string,
  params: Record<string, unknown>,
  ctx: ServerContext,
) {
  return forwardToServer(gateway.services.deps, entry, method, params, forwardOptions(gateway, ctx));
}

/** Forwards a request that may need input (resources/read, prompts/get), sealing the upstream's state. */
export async function forwardRound(
  gateway: GatewayServer,
  entry: DirectoryEntry,
  method: string,
  params: Record<string, unknown>,
  ctx: ServerContext,
) {
  const state = ctx.mcpReq.requestState<RoundState>();
  const result = await forwardToServer(gateway.services.deps, entry, method, params, {
    ...forwardOptions(gateway, ctx),
    ...withRound(roundOf(ctx, state, entry.server.id)),
  });
  return finish(gateway, result, ctx, entry.server.id);
}

/** A result as the caller gets it; an upstream's input_required with its state sealed to this caller. */
export async function finish(
  gateway: GatewayServer,
  result: Record<string, unknown> | ToolCallResult | InputRequired,
  ctx: ServerContext,
  serverId?: string,
) {
  if (result.resultType !== "input_required") return result;
  const { inputRequests, requestState, answered } = result as InputRequired;
  const id = serverId ?? "";
  return inputRequired({
    ...(inputRequests ? { inputRequests: inputRequests as never } : {}),
    requestState: await gateway.services.codec.mint(
      {
        s: id,
        ...(requestState !== undefined ? { u: requestState } : {}),
        ...(answered ? { a: answered } : {}),
      },
      ctx,
    ),
  });
}

/**
 * The answers a retry carries, for the upstream: the caller's `inputResponses` as given and — only
 * when the sealed state says this server issued them — the gateway's own answers of the round and the
 * upstream's own `requestState`.
 */
export function roundOf(
  ctx: ServerContext,
  state: RoundState | undefined,
  serverId: string,
): InputRound | undefined {
  const issued = state && "s" in state && state.s === serverId ? state : undefined;
  const requestState = issued?.u;
  // The answer to the gateway's own question (authorize at the upstream): the retry is a fresh call.
  if (requestState === AUTHORIZATION_ROUND) return undefined;
  const inputResponses = issued?.a
    ? { ...ctx.mcpReq.inputResponses, ...issued.a }
    : ctx.mcpReq.inputResponses;
  if (!inputResponses && requestState === undefined) return undefined;
  return {
    ...(inputResponses ? { inputResponses } : {}),
    ...(requestState !== undefined ? { requestState } : {}),
  };
}

/** A round as call options carry it: present only when there is one. */
export function withRound(round: InputRound | undefined): { round?: InputRound } {
  return round ? { round } : {};
}

/** A page of `items` from an offset cursor. */
export function paginate<T>(items: T[], cursor: string | undefined): { page: T[]; nextCursor?: string } {
  const offset = decodeCursor(cursor);
  const page = items.slice(offset, offset + MCP_PAGE_SIZE);
  const next = offset + MCP_PAGE_SIZE < items.length ? encodeCursor(offset + MCP_PAGE_SIZE) : undefined;
  return { page, ...(next ? { nextCursor: next } : {}) };
}

/** The request's `Mcp-Param-*` headers (SEP-2243), none or some. */
function mcpParamHeaders(request: Request | undefined): Record<string, string> | undefined {
  if (!request) return undefined;
  const found: Record<string, string> = {};
  for (const [name, value] of request.headers) if (name.startsWith("mcp-param-")) found[name] = value;
  return found;
}

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** True when a log message of `level` passes a `threshold`. */
export function atLeast(level: unknown, threshold: string): boolean {
  const at = LEVELS.indexOf(String(level));
  return at === -1 || at >= LEVELS.indexOf(threshold);
}
