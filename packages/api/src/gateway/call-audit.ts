/**
 * Each tool call's one audit event, from every plane: who called (key id and name, user, admin), from
 * where, through which plane, on which server and tool, how it ended and how long it took, the sizes of
 * its arguments and result, its argument key names and its trace id — never a value.
 */
import {
  AppError,
  type AuditEvent,
  type AuditPlane,
  afterAnswer,
  auditEventId,
  currentTraceId,
  parseQualifiedName,
} from "@mcpgw/core";
import { CallFailure } from "@mcpgw/upstream";
import { auditPrincipal } from "../audit-principal";
import type { Principal } from "../env";
import { AuthorizationNeeded } from "./authorization-needed";
import type { GatewayDeps } from "./deps";
import type { Directory } from "./directory";

/** The most argument key names an event lists, and the longest name kept. */
const MAX_ARGUMENT_KEYS = 64;
const MAX_NAME_CHARS = 128;

/**
 * What the audit knows of a call before it runs: the plane it came through, from where, the tool set;
 * the call fills in its server and tool once it has resolved them (`callGatewayTool`).
 */
export interface CallNote {
  plane: AuditPlane;
  source?: string | undefined;
  toolset?: string | undefined;
  serverId?: string;
  serverName?: string;
  tool?: string;
}

/** The plane of an MCP endpoint: a tool set's, one server's (`/mcp/{server}`), or the aggregate `/mcp`. */
export function mcpPlane(at: { toolset: string | undefined; server: string | undefined }): AuditPlane {
  return at.toolset !== undefined ? "mcp_set" : at.server !== undefined ? "mcp_server" : "mcp";
}

/**
 * A note for a call of `named` (`<server>__<tool>`, else what the caller named, kept as the tool); with
 * the server's id from `directory`'s view as it is (no read) when it knows that server — so a call that
 * fails or is refused before it resolves its server is still found under the server's id.
 */
export function callNote(
  base: Pick<CallNote, "plane" | "source" | "toolset">,
  named: string,
  directory?: Pick<Directory, "cachedNamed">,
): CallNote {
  let parts: { server?: string; tool: string };
  try {
    parts = parseQualifiedName(named);
  } catch {
    parts = { tool: named };
  }
  const serverId = parts.server ? directory?.cachedNamed(parts.server)?.server.id : undefined;
  return {
    ...base,
    ...(serverId ? { serverId } : {}),
    ...(parts.server ? { serverName: parts.server } : {}),
    tool: clip(parts.tool),
  };
}

/**
 * Runs one tool call and records its one event (none without `deps.audit`): its outcome the result's
 * (`ok`, `tool_error`, `input_required`) or the error code it ended with, which it throws on.
 */
export async function audited<T extends object>(
  deps: Pick<GatewayDeps, "audit">,
  note: CallNote,
  principal: Principal | undefined,
  args: Record<string, unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const audit = deps.audit;
  if (!audit) return run();
  const started = performance.now();
  const traceId = currentTraceId();
  let outcome = "internal";
  let responseBytes: number | undefined;
  try {
    const result = await run();
    outcome = resultOutcome(result);
    responseBytes = resultBytes(result);
    return result;
  } catch (error) {
    outcome = errorOutcome(error);
    throw error;
  } finally {
    const end = {
      at: Date.now(),
      outcome,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      responseBytes,
      traceId,
    };
    // Built and recorded once the answer is written: measuring the arguments is no part of the call.
    afterAnswer(() => audit.record(callEvent(note, principal, args, end)));
  }
}

/** Records the event of a call refused before it ran (`rate_limited`, say); `args` when they were read. */
export function auditRefused(
  deps: Pick<GatewayDeps, "audit">,
  note: CallNote,
  principal: Principal | undefined,
  args: Record<string, unknown> | undefined,
  code: string,
): void {
  deps.audit?.record(
    callEvent(note, principal, args, {
      at: Date.now(),
      outcome: code,
      durationMs: 0,
      traceId: currentTraceId(),
    }),
  );
}

function callEvent(
  note: CallNote,
  principal: Principal | undefined,
  args: Record<string, unknown> | undefined,
  end: {
    /** When the call ended (epoch ms). */
    at: number;
    outcome: string;
    durationMs: number;
    responseBytes?: number | undefined;
    traceId: string | undefined;
  },
): AuditEvent {
  const now = end.at;
  // Fields set one by one on one object: this runs on every call, and each `...(x ? { x } : {})` was
  // an object more to collect.
  const event: AuditEvent = {
    id: auditEventId(now),
    at: new Date(now).toISOString(),
    type: "call",
    principal: auditPrincipal(principal),
    plane: note.plane,
    outcome: end.outcome,
    durationMs: end.durationMs,
  };
  // Every name may be the caller's (an unknown tool, a path's server or set): each is clipped.
  if (note.source) event.source = clip(note.source);
  if (note.serverId) event.serverId = clip(note.serverId);
  if (note.serverName) event.serverName = clip(note.serverName);
  if (note.tool) event.tool = clip(note.tool);
  if (note.toolset) event.toolset = clip(note.toolset);
  if (args) event.requestBytes = argumentBytes(args);
  if (end.responseBytes !== undefined) event.responseBytes = end.responseBytes;
  if (args) event.argumentKeys = Object.keys(args).slice(0, MAX_ARGUMENT_KEYS).map(clip);
  if (end.traceId) event.traceId = end.traceId;
  return event;
}

function resultOutcome(answer: object): string {
  const result = answer as Record<string, unknown>;
  if (result.resultType === "input_required") return "input_required";
  return result.isError === true ? "tool_error" : "ok";
}

/** The code a failed call ends with (its AppError's; an upstream failure's as the gateway answers it). */
export function errorOutcome(error: unknown): string {
  if (error instanceof AppError) return error.code;
  if (error instanceof AuthorizationNeeded) return "upstream.authorization_required";
  if (error instanceof CallFailure) return error.kind === "timeout" ? "upstream.timeout" : "upstream.error";
  // An MCP error made of the gateway's problem carries its code in `data.code`.
  const { code, data } = (error ?? {}) as { code?: unknown; data?: { code?: unknown } };
  if (typeof data?.code === "string") return data.code;
  return typeof code === "number" ? `rpc.${code}` : "internal";
}

/** The arguments' size as JSON (they came as JSON, bounded by the request body's limit). */
function argumentBytes(args: Record<string, unknown>): number {
  try {
    return Buffer.byteLength(JSON.stringify(args));
  } catch {
    return 0;
  }
}

/**
 * The result's size as JSON, near enough and without serialising it again: text and binary data by
 * their length, any other part and the structured content as JSON.
 */
export function resultBytes(answer: object): number | undefined {
  const result = answer as Record<string, unknown>;
  if (!Array.isArray(result.content)) return undefined;
  let bytes = 0;
  for (const part of result.content as Array<Record<string, unknown>>) {
    if (typeof part.text === "string") bytes += part.text.length + 24;
    else if (typeof part.data === "string") bytes += part.data.length + 48;
    else bytes += JSON.stringify(part).length;
  }
  if (result.structuredContent !== undefined) bytes += JSON.stringify(result.structuredContent).length;
  return bytes;
}

function clip(name: string): string {
  return name.length > MAX_NAME_CHARS ? name.slice(0, MAX_NAME_CHARS) : name;
}
