import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { transportHttpStatus } from "./failure";
import type { UpstreamSession } from "./session";

/** The longest a call may run, however often progress extends it. */
export const MAX_CALL_MS = 15 * 60_000;

/** A tool call's result as the gateway returns it. */
export interface ToolCallResult {
  content: unknown[];
  structuredContent?: Record<string, unknown>;
  /** The text parts of `content`, joined by newlines. */
  text: string;
  isError: boolean;
}

/** Why a call did not produce a result. */
export type CallFailureKind = "timeout" | "unreachable" | "rpc" | "cancelled" | "session_expired";

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
  return shapeResult(
    result as { content?: unknown[]; structuredContent?: Record<string, unknown>; isError?: boolean },
  );
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

/** `{content, structuredContent?, text, isError}` from an MCP CallToolResult. */
export function shapeResult(result: {
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}): ToolCallResult {
  const content = result.content ?? [];
  const text = content
    .filter((part): part is { type: "text"; text: string } => (part as { type?: string }).type === "text")
    .map((part) => part.text)
    .join("\n");
  return {
    content,
    ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
    text,
    isError: result.isError === true,
  };
}

function toCallFailure(error: unknown, options: CallOptions): CallFailure {
  if (options.signal?.aborted)
    return new CallFailure("cancelled", "the caller cancelled the call", { cause: error });
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

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
