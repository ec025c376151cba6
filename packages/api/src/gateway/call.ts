import { AppError, afterAnswer, beginSpan, isPerUser } from "@mcpgw/core";
import { recordToolCall } from "@mcpgw/telemetry";
import {
  type CallContext,
  CallFailure,
  callTool,
  type ForwardOptions,
  forwardRequest,
  type InputRequired,
  type InputRound,
  RunnerDirectory,
  type ToolCallResult,
} from "@mcpgw/upstream";
import type { Principal } from "../env";
import { credentialSubject, keyOwnerOf } from "../upstream-authorization";
import { AuthorizationNeeded } from "./authorization-needed";
import type { CallNote } from "./call-audit";
import { resolveTool, type ServerScope } from "./catalogue";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";
import { withServerSession } from "./server-session";
import { isThreadScoped, threadOf } from "./thread-access";
import { toolGate } from "./tool-access";

/** The outcomes of a tool call that got a result from its server. */
const ANSWERED = new Set(["ok", "tool_error", "input_required"]);

/** How a call reaches back to its caller, and who the caller is. */
export interface CallerOptions {
  chat?: string;
  scope?: ServerScope;
  signal?: AbortSignal;
  thread?: string;
  /** Who calls: decides whose threads `thread` may name. */
  principal?: Principal;
  /** The caller's channels for what the upstream sends mid-call (progress, logs, questions). */
  context?: CallContext;
  /** The call's audit note: the call fills in its server and tool once resolved (see `audited`). */
  note?: CallNote;
  /** The answers of an earlier round, when the upstream needed input (2026-07-28). */
  round?: InputRound;
  /**
   * `legacy`: the caller speaks 2025 — a server that speaks both eras serves it in its 2025 surface, over
   * its 2025 session (what it offers, and asks mid-call, only there).
   */
  era?: "legacy";
}

/**
 * Calls a tool through the warm session of its server. Tool-level failures are results
 * (`isError: true`); an upstream's need for input comes back as {@link InputRequired}; a transport
 * failure marks the server failed (under the generation fence), schedules the retry and becomes
 * `upstream.unreachable` (502) / `upstream.timeout` (504).
 */
export async function callGatewayTool(
  deps: GatewayDeps,
  qualified: string,
  args: Record<string, unknown>,
  options: CallerOptions = {},
): Promise<ToolCallResult | InputRequired> {
  const gate = await toolGate(deps, options.principal);
  const { entry, tool } = await resolveTool(deps, qualified, { ...options, gate });
  if (options.note)
    Object.assign(options.note, {
      serverId: entry.server.id,
      serverName: entry.server.name,
      tool: tool.name,
    });
  const thread = isThreadScoped(entry)
    ? await threadOf(deps, entry, options.thread, options.principal)
    : undefined;
  const { server } = entry;
  const caller = sessionCaller(server, options.principal);
  const logger = deps.logger.child({ server: server.name, tool: tool.name });
  const started = performance.now();
  logger.info("tool call started", { argumentKeys: Object.keys(args) });
  const heartbeat = setInterval(
    () => logger.info("tool call in flight", { elapsedMs: Math.round(performance.now() - started) }),
    deps.heartbeatMs ?? 10_000,
  );
  let outcome = "error";
  const span = beginSpan(`tools/call ${server.name}__${tool.name}`, {
    attributes: {
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": tool.name,
      "mcpgw.server.id": server.id,
      "mcpgw.server.name": server.name,
    },
  });
  /** Time spent in the server's session (opening it, the call, a retry): the upstream's part. */
  let upstreamMs = 0;
  const call = () =>
    timed(
      () =>
        withServerSession(
          deps,
          entry,
          (session, callOptions) =>
            callTool(session, tool.name, args, { ...callOptions, ...forwarded(options), tool }),
          {
            ...(options.signal ? { signal: options.signal } : {}),
            ...(thread ? { thread } : {}),
            ...caller,
            ...sessionEra(entry, options.era, tool.name),
          },
        ),
      (ms) => {
        upstreamMs += ms;
      },
    );
  try {
    const result = await span.run(call).catch((error) => {
      // An upstream that restarted forgot our session: reopen once and retry.
      if (error instanceof CallFailure && error.kind === "session_expired") return span.run(call);
      throw error;
    });
    outcome = "resultType" in result ? "input_required" : result.isError ? "tool_error" : "ok";
    return result;
  } catch (error) {
    if (error instanceof AuthorizationNeeded) outcome = "authorization_required";
    else outcome = error instanceof CallFailure ? error.kind : "error";
    throw error instanceof CallFailure ? await callFailureOf(deps, error, server) : error;
  } finally {
    clearInterval(heartbeat);
    span.end({ "mcpgw.outcome": outcome }, ANSWERED.has(outcome) ? undefined : outcome);
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    // A call that got a result (a tool error or a request for input too) did not fail.
    deps.callLatency?.record(server.id, durationMs, ANSWERED.has(outcome));
    const times = { totalMs: durationMs, upstreamMs };
    afterAnswer(() => recordToolCall(server.name, tool.name, outcome, times));
    logger.info("tool call finished", { outcome, durationMs });
  }
}

/** Runs `work`, passing its duration (ms) to `took` whether it settles or throws. */
async function timed<T>(work: () => Promise<T>, took: (ms: number) => void): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    took(performance.now() - started);
  }
}

/**
 * Forwards a request other than a tool call (resources, prompts, completions, logging level,
 * subscriptions) to a server's warm session; failures become the gateway's problems, as for calls.
 */
export async function forwardToServer(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  method: string,
  params: Record<string, unknown> | undefined,
  options: Pick<CallerOptions, "signal" | "context" | "round" | "principal" | "era"> & {
    /** False for a fan-out (an aggregated list): a caller with no connection of their own is skipped, not asked. */
    authorize?: boolean;
  } = {},
): Promise<Record<string, unknown>> {
  try {
    return await withServerSession(
      deps,
      entry,
      (session, callOptions) =>
        forwardRequest(session, method, params, { ...callOptions, ...forwarded(options) }),
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...sessionCaller(entry.server, options.principal),
        ...(options.authorize === false ? { authorize: false } : {}),
        ...sessionEra(entry, options.era),
      },
    );
  } catch (error) {
    if (error instanceof AuthorizationNeeded)
      throw new AppError("upstream.authorization_required", error.message, {
        authorizationUrl: error.link.authorizationUrl,
      });
    throw error instanceof CallFailure ? await callFailureOf(deps, error, entry.server) : error;
  }
}

/**
 * A call failure as the gateway's problem — unless the server was deleted or disabled while the call was
 * under way: then its session or child ended with that change, and the caller is told so (404/409), not
 * that the upstream could not be reached. One read, on the failure path only.
 */
async function callFailureOf(
  deps: Pick<GatewayDeps, "store" | "runner">,
  error: CallFailure,
  server: DirectoryEntry["server"],
): Promise<AppError> {
  if (error.kind !== "cancelled" && error.kind !== "too_large") {
    const now = await deps.store.servers.getPlain(server.id).catch(() => server);
    if (!now) return new AppError("server.not_found", `Server '${server.name}' was deleted during the call.`);
    if (!now.enabled) {
      return new AppError("server.unavailable", `Server '${server.name}' was disabled during the call.`, {
        state: "disabled",
      });
    }
  }
  // In a fleet, a stdio call whose runner could not be reached (it died under the call, or before it):
  // retryable — the instance starts on another runner once the lost one's registration lapses.
  if (
    server.transport === "stdio" &&
    error.kind === "unreachable" &&
    deps.runner instanceof RunnerDirectory
  ) {
    return new AppError(
      "upstream.runner_lost",
      `Server '${server.name}': the stdio runner serving it was lost; retry the call.`,
      { retryable: true },
      { cause: error },
    );
  }
  return toAppError(error, server.name);
}

/**
 * Whom a server's session serves: the caller a stdio server's runner face names (none without a
 * principal) and, for a `per_user` server, whose credential it uses and who signs in for a key
 * (refused without a principal).
 */
function sessionCaller(
  server: DirectoryEntry["server"],
  principal: Principal | undefined,
): { caller?: string; subject?: string; keyOwner?: string | undefined } {
  const subject = isPerUser(server) ? credentialSubject(principal) : undefined;
  return {
    ...(principal ? { caller: credentialSubject(principal) } : {}),
    ...(subject ? { subject, keyOwner: keyOwnerOf(principal) } : {}),
  };
}

/**
 * The session a caller of `era` is served over: a dual-era server's 2025 one for a 2025 caller — for a
 * tool call, only when its 2025 surface lists the tool — else its one (which serves 2025 callers too).
 */
function sessionEra(entry: DirectoryEntry, era: CallerOptions["era"], tool?: string): { era?: "legacy" } {
  const legacy = entry.profile?.legacy;
  if (!era || !legacy) return {};
  return tool === undefined || legacy.tools?.includes(tool) ? { era } : {};
}

function forwarded(
  options: Pick<CallerOptions, "context" | "round">,
): Pick<ForwardOptions, "context" | "round"> {
  return {
    ...(options.context ? { context: options.context } : {}),
    ...(options.round ? { round: options.round } : {}),
  };
}

/** A call failure as the gateway's problem; the failure stays its cause (an upstream's JSON-RPC error in it). */
export function toAppError(error: CallFailure, server: string): AppError {
  const cause = { cause: error };
  switch (error.kind) {
    case "timeout":
      return new AppError(
        "upstream.timeout",
        `Server '${server}' did not answer the call in time.`,
        {},
        cause,
      );
    case "rpc":
      return new AppError(
        "upstream.error",
        `Server '${server}' answered with an error: ${error.message}`,
        {},
        cause,
      );
    case "cancelled":
      return new AppError("upstream.unreachable", "The call was cancelled.", {}, cause);
    case "too_large":
      return new AppError("upstream.response_too_large", `Server '${server}': ${error.message}.`, {}, cause);
    case "unreadable":
      return new AppError(
        "upstream.error",
        `Server '${server}' sent an answer the gateway cannot read: ${error.message}`,
        {},
        cause,
      );
    default:
      return new AppError(
        "upstream.unreachable",
        `Server '${server}' could not be reached: ${error.message}`,
        {},
        cause,
      );
  }
}
