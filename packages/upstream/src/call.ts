import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { transportHttpStatus } from "./classify-failure";
import { isMessageTooLarge } from "./limits";
import type { UpstreamSession } from "./session";

/** The longest a call may run, however often progress extends it. */
export const MAX_CALL_MS = 15 * 60_000;

/** A tool call's result as the gateway returns it: the upstream's, whole. */
export interface ToolCallResult {
  content: unknown[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  _meta?: Record<string, unknown>;
}

/** Why a call did not produce a result. */
export type CallFailureKind =
  | "timeout"
  | "unreachable"
  | "rpc"
  | "cancelled"
  | "session_expired"
  | "too_large";

/** A tool call that failed below the tool level (the upstream never produced a tool result). */
export class CallFailure extends Error {
  override readonly name = "CallFailure";
  constructor(
    readonly kind: CallFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface CallOptions {
  /** Per-call timeout; progress notifications reset it, up to {@link MAX_CALL_MS}. */
  timeoutMs: number;
  /** The caller went away: cancel the upstream call. */
  signal?: AbortSignal;
  /** The session broke under the call. */
  broken?: AbortSignal;
}

/** Calls `name` on the session; tool-level errors come back as results, everything else as CallFailure. */
export async function callTool(
  session: UpstreamSession,
  name: string,
  args: Record<string, unknown>,
  options: CallOptions,
): Promise<ToolCallResult> {
  const result = await requestUpstream(
    (requestOptions) =>
      session.client.callTool({ name, arguments: args }, CallToolResultSchema, {
        ...requestOptions,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: MAX_CALL_MS,
        onprogress: () => {},
      }),
    options,
  );
  return shapeResult(result as Parameters<typeof shapeResult>[0]);
}

/**
 * Runs one request on an upstream session with the call's timeout and cancellation (the caller
 * leaving, or the session breaking); failures below the tool level come back as CallFailure.
 */
export async function requestUpstream<T>(
  run: (requestOptions: { timeout: number; signal?: AbortSignal }) => Promise<T>,
  options: CallOptions,
): Promise<T> {
  const { signal, release } = linkSignals(options.signal, options.broken);
  try {
    return await run({ timeout: options.timeoutMs, signal });
  } catch (error) {
    throw toCallFailure(error, options);
  } finally {
    release();
  }
}

/**
 * One signal that aborts when any source does, with its listeners removed afterwards — the session's
 * `broken` signal lives as long as the session, so per-call listeners must not pile up on it (nor
 * wait for GC, as AbortSignal.any's do).
 */
function linkSignals(...sources: Array<AbortSignal | undefined>): {
  signal: AbortSignal;
  release: () => void;
} {
  const controller = new AbortController();
  const live = sources.filter((source): source is AbortSignal => source !== undefined);
  const aborted = live.find((source) => source.aborted);
  if (aborted) controller.abort(aborted.reason);
  const onAbort = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const source of live) source.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      for (const source of live) source.removeEventListener("abort", onAbort);
    },
  };
}

/** An MCP CallToolResult as the gateway passes it on: `content` always an array, `isError` a boolean. */
export function shapeResult(result: {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}): ToolCallResult {
  return {
    ...result,
    content: result.content ?? [],
    isError: result.isError === true,
  };
}

/** The text parts of a result's content, in order (what the REST `text` field joins with newlines). */
export function textParts(content: readonly unknown[]): string[] {
  return content
    .filter((part): part is { type: "text"; text: string } => {
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      return type === "text" && typeof text === "string";
    })
    .map((part) => part.text);
}

function toCallFailure(error: unknown, options: CallOptions): CallFailure {
  if (options.signal?.aborted)
    return new CallFailure("cancelled", "the caller cancelled the call", { cause: error });
  if (isMessageTooLarge(error)) return new CallFailure("too_large", describeError(error), { cause: error });
  if (options.broken?.aborted) {
    return new CallFailure("unreachable", `upstream connection lost: ${reasonText(options.broken.reason)}`, {
      cause: error,
    });
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return new CallFailure("timeout", "the tool did not answer in time", { cause: error });
    if (error.code === ErrorCode.ConnectionClosed)
      return new CallFailure("unreachable", "upstream connection closed", { cause: error });
    return new CallFailure("rpc", error.message, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  if (transportHttpStatus(error) === 404) {
    return new CallFailure("session_expired", "the upstream no longer knows this session", { cause: error });
  }
  return new CallFailure("unreachable", message, { cause: error });
}

function describeError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/^(MCP error -?\d+: )+/, "");
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
