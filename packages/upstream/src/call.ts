import {
  inSpan,
  jsonDepth,
  MAX_RESULT_DEPTH,
  RPC,
  requiresTask,
  SpanKind,
  type ToolInfo,
  withTraceMeta,
} from "@mcpgw/core";
import {
  CLIENT_CAPABILITIES_META_KEY,
  isInputRequiredResult,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  RELATED_TASK_META_KEY,
  SdkError,
  SdkErrorCode,
  SERVER_INFO_META_KEY,
} from "@modelcontextprotocol/client";
import { type CallContext, type Progress, progressOf } from "./call-context";
import { transportHttpStatus } from "./classify-failure";
import { Deadline } from "./deadline";
import { UnreadableAnswerError } from "./json-messages";
import { isMessageTooLarge, MAX_CALL_MS } from "./limits";
import { capabilitiesForUpstream, splitQuestions } from "./own-answers";
import type { UpstreamSession } from "./session";
import { whenAborted } from "./when-aborted";

/** A tool call's result as the gateway returns it: the upstream's, whole. */
export interface ToolCallResult {
  content: unknown[];
  structuredContent?: unknown;
  isError: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * A 2026-07-28 upstream's answer that it needs input first (multi round-trip requests): what to ask,
 * keyed by its own names, and its opaque state to echo on the retry.
 */
export interface InputRequired {
  resultType: "input_required";
  inputRequests?: Record<string, unknown>;
  requestState?: string;
  /**
   * The gateway's own answers to questions left out of `inputRequests` (roots, for a caller that
   * declared none): they go back to the upstream with the caller's answers on its retry.
   */
  answered?: Record<string, unknown>;
}

/** The retry of a request that needed input: the answers, and the upstream's state echoed. */
export interface InputRound {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/** True for an upstream's input-required answer. */
export function isInputRequired(result: unknown): result is InputRequired {
  return isInputRequiredResult(result);
}

/** Why a call did not produce a result. */
export type CallFailureKind =
  | "timeout"
  | "unreachable"
  | "rpc"
  | "cancelled"
  | "session_expired"
  | "too_large"
  /** The upstream answered, but with what the gateway cannot read (not JSON, not the protocol's shape). */
  | "unreadable";

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

/** How one call reaches its caller: progress, logs, questions, and the answers of an earlier round. */
export interface ForwardOptions extends CallOptions {
  context?: CallContext;
  round?: InputRound;
}

/**
 * Calls `name` on the session; tool-level errors come back as results, an upstream's need for input
 * (2026-07-28) as {@link InputRequired}, everything else as CallFailure. `tool` (the catalogue's
 * definition) lets the SDK mirror `x-mcp-header` arguments into headers without listing tools first.
 */
export async function callTool(
  session: UpstreamSession,
  name: string,
  args: Record<string, unknown>,
  options: ForwardOptions & { tool?: ToolInfo },
): Promise<ToolCallResult | InputRequired> {
  const result = await withOwnAnswers(session, options, (round) =>
    callRound(session, name, args, { ...options, ...(round ? { round } : {}) }),
  );
  if (isInputRequired(result)) return result;
  return shapeResult(withoutEnvelope(result as Parameters<typeof shapeResult>[0]));
}

/** One round of a tool call: the upstream's answer as it came. */
function callRound(
  session: UpstreamSession,
  name: string,
  args: Record<string, unknown>,
  options: ForwardOptions & { tool?: ToolInfo },
): Promise<unknown> {
  const { context, round } = options;
  const given = { name, arguments: args, ...envelope(session, context), ...roundParams(round) };
  return inUpstreamSpan(session, "tools/call", { "gen_ai.tool.name": name }, () =>
    requestUpstream((requestOptions) => {
      // The trace context of this request's span, in place of any the caller sent.
      const params = withTraceMeta(given);
      const callOptions = {
        ...requestOptions,
        allowInputRequired: true,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: MAX_CALL_MS,
        onprogress: session.router.relayProgress(context),
      };
      const modern = session.era === "modern";
      const verbatim = modern ? context?.paramHeaders : undefined;
      return session.router.run(context, (headers) =>
        verbatim
          ? // A 2026 caller's own Mcp-Param-* headers (none, too), for the upstream to check (the SDK's
            // callTool would re-derive them from the arguments, and retry past the upstream's refusal).
            session.client.requestToolCall(params, { ...callOptions, headers: { ...verbatim, ...headers } })
          : modern
            ? session.client.callTool(params, {
                ...callOptions,
                ...mirroring(session, options.tool),
                ...(headers ? { headers } : {}),
              })
            : requiresTask(options.tool) && callsToolsAsTasks(session)
              ? callAsTask(session, params, {
                  timeout: requestOptions.timeout,
                  ...(requestOptions.signal ? { signal: requestOptions.signal } : {}),
                  ...(headers ? { headers } : {}),
                  onProgress: callOptions.onprogress,
                })
              : // A 2025 session has no headers to mirror, and the gateway never fills the SDK's tools/list
                // cache (results pass through, never re-validated): callTool would only look it up, per call.
                // A caller not listening for progress is called directly where the session can.
                session.direct && !context?.onProgress
                ? session.direct.call(
                    params,
                    { ...requestOptions, ...(headers ? { headers } : {}) },
                    (id, handover) =>
                      session.client.requestToolCallAs(id, params, {
                        ...callOptions,
                        ...handover,
                        ...(headers ? { headers } : {}),
                      }),
                  )
                : session.client.requestToolCall(params, { ...callOptions, ...(headers ? { headers } : {}) }),
      );
    }, options),
  );
}

/** How long a best-effort `tasks/cancel` may take before the gateway stops waiting for it. */
const CANCEL_TIMEOUT_MS = 5_000;

/**
 * Whether a 2025 upstream takes `tools/call` as a task: it declared `tasks.requests.tools.call`
 * (without it a client must not ask for a task, whatever a tool's `taskSupport` says).
 */
function callsToolsAsTasks(session: UpstreamSession): boolean {
  const tasks = session.client.getServerCapabilities()?.tasks as TasksCapability | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

interface TasksCapability {
  cancel?: unknown;
  requests?: { tools?: { call?: unknown } };
}

/**
 * Calls a tool a 2025 upstream runs only as a task (`execution.taskSupport: "required"`) as the caller
 * sees a plain call: the call creates the task, and `tasks/result` (which answers once the task has
 * ended) is its result — without the `_meta` naming the upstream's task, which is not the caller's. A
 * plain answer to the call (no `task` in it) is the result itself.
 *
 * One deadline covers both requests; progress on the call's token (valid for the whole task) reaches
 * the caller and pushes the deadline back, as it does a plain call's, up to {@link MAX_CALL_MS}. A call
 * given up on (the caller left, the deadline passed, the upstream could not be heard) cancels the task.
 */
async function callAsTask(
  session: UpstreamSession,
  params: Record<string, unknown>,
  options: {
    timeout: number;
    signal?: AbortSignal;
    headers?: Record<string, string>;
    onProgress: (progress: Progress) => void;
  },
): Promise<Record<string, unknown>> {
  const deadline = new Deadline(options.timeout, MAX_CALL_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  const progress = session.client.listenProgress((notification) => {
    const heard = progressOf(notification);
    if (!heard) return;
    deadline.extend();
    options.onProgress(heard);
  });
  const requestOptions = {
    timeout: MAX_CALL_MS,
    signal,
    ...(options.headers ? { headers: options.headers } : {}),
  };
  const meta = { ...(params._meta as Record<string, unknown> | undefined), progressToken: progress.token };
  let taskId: string | undefined;
  try {
    const created = await session.client.requestObject(
      { method: "tools/call", params: { ...params, _meta: meta, task: { ttl: MAX_CALL_MS } } },
      requestOptions,
    );
    if (created.task === undefined) return created;
    const named = (created.task as { taskId?: unknown } | null)?.taskId;
    if (typeof named !== "string")
      throw new ProtocolError(RPC.INTERNAL_ERROR, "its answer to a call made as a task named no task");
    taskId = named;
    const result = await session.client.requestObject(
      { method: "tasks/result", params: { taskId } },
      requestOptions,
    );
    return withoutMetaKey(result as { _meta?: Record<string, unknown> }, RELATED_TASK_META_KEY);
  } catch (error) {
    // A JSON-RPC error from tasks/result is the task's own outcome: it has ended.
    if (taskId !== undefined && !(error instanceof ProtocolError)) cancelTask(session, taskId);
    throw error;
  } finally {
    progress.release();
    deadline.clear();
  }
}

/** Asks the upstream to cancel a task no one waits for any more — best effort, not waited for. */
function cancelTask(session: UpstreamSession, taskId: string): void {
  const tasks = session.client.getServerCapabilities()?.tasks as TasksCapability | undefined;
  if (tasks?.cancel === undefined) return;
  session.client
    .requestObject({ method: "tasks/cancel", params: { taskId } }, { timeout: CANCEL_TIMEOUT_MS })
    .catch(() => undefined);
}

/**
 * Forwards any other request (resources, prompts, completions, logging level, subscriptions) to the
 * session as it came, with the caller's context; the result is the upstream's, whole — including an
 * input-required answer to `resources/read` or `prompts/get`.
 */
export async function forwardRequest(
  session: UpstreamSession,
  method: string,
  params: Record<string, unknown> | undefined,
  options: ForwardOptions,
): Promise<Record<string, unknown>> {
  return withOwnAnswers(session, options, (round) =>
    forwardRound(session, method, params, { ...options, ...(round ? { round } : {}) }),
  );
}

/** One round of a forwarded request: the upstream's answer, without its envelope. */
function forwardRound(
  session: UpstreamSession,
  method: string,
  params: Record<string, unknown> | undefined,
  options: ForwardOptions,
): Promise<Record<string, unknown>> {
  const { context, round } = options;
  const withContext = { ...params, ...envelope(session, context), ...roundParams(round) };
  return inUpstreamSpan(session, method, {}, () =>
    requestUpstream(
      (requestOptions) =>
        session.router.run(context, (headers) =>
          session.client.request(
            // The trace context of this request's span, in place of any the caller sent.
            { method: method as "ping", params: withTraceMeta(withContext) },
            {
              ...requestOptions,
              ...(headers ? { headers } : {}),
              allowInputRequired: true,
              resetTimeoutOnProgress: true,
              maxTotalTimeout: MAX_CALL_MS,
              ...(context?.onProgress ? { onprogress: session.router.relayProgress(context) } : {}),
            },
          ),
        ),
      options,
    ),
  ).then((result) => withoutEnvelope(result as Record<string, unknown>));
}

/**
 * Runs one request to an upstream in a client span `<method>` (the session's transport, protocol and
 * the given names as attributes), so its HTTP request and `_meta` carry that span's trace context.
 */
function inUpstreamSpan<T>(
  session: UpstreamSession,
  method: string,
  attributes: Record<string, string>,
  send: () => Promise<T>,
): Promise<T> {
  return inSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "mcp.method.name": method,
        "mcp.protocol.version": session.protocolVersion,
        "network.transport": session.kind,
        ...attributes,
      },
    },
    send,
  );
}

/** How many rounds in a row the gateway answers alone before it takes the upstream to be asking in a loop. */
const MAX_OWN_ROUNDS = 8;

/**
 * Sends a request round by round (`send`, given the round to send — first the caller's), answering
 * what a 2026 upstream asks that is the gateway's to answer for the caller ({@link splitQuestions}): a
 * round of only such questions is answered and sent again at once, the upstream's state echoed; a
 * round with questions for the caller too comes back with only those, the gateway's answers in `answered`.
 */
async function withOwnAnswers<T>(
  session: UpstreamSession,
  options: ForwardOptions,
  send: (round: InputRound | undefined) => Promise<T>,
): Promise<T> {
  let round = options.round;
  for (let rounds = 0; ; rounds++) {
    const result = await send(round);
    if (session.era !== "modern" || !isInputRequired(result)) return result;
    const { answers, rest } = splitQuestions(result.inputRequests, options.context?.clientCapabilities);
    if (Object.keys(answers).length === 0) return result;
    if (Object.keys(rest).length > 0) return { ...result, inputRequests: rest, answered: answers } as T;
    if (rounds === MAX_OWN_ROUNDS)
      throw new CallFailure("rpc", `it kept asking for roots after ${MAX_OWN_ROUNDS} answers of none`);
    const { requestState } = result;
    round = { inputResponses: answers, ...(requestState !== undefined ? { requestState } : {}) };
  }
}

/**
 * An upstream's result without the protocol envelope it stamped on it (`_meta`'s
 * `io.modelcontextprotocol/serverInfo`, which names the upstream: the gateway answers as itself);
 * everything else — `_meta`'s other keys included — passes whole.
 */
export function withoutEnvelope<T extends { _meta?: Record<string, unknown> }>(result: T): T {
  return withoutMetaKey(result, SERVER_INFO_META_KEY);
}

/** `result` without `_meta[key]` (and without `_meta` when nothing else is left in it). */
function withoutMetaKey<T extends { _meta?: Record<string, unknown> }>(result: T, key: string): T {
  const meta = result._meta;
  if (!meta || !(key in meta)) return result;
  const { [key]: _dropped, ...rest } = meta;
  const { _meta, ...plain } = result;
  return (Object.keys(rest).length > 0 ? { ...plain, _meta: rest } : plain) as T;
}

/**
 * The caller's side of a 2026-07-28 request envelope — its capabilities (an upstream asks only for
 * what the caller can answer; roots the gateway answers for a caller without them) and log level; the SDK adds the protocol version and client info.
 * A 2025 session has no envelope: what it may ask was declared once, at initialize.
 */
function envelope(session: UpstreamSession, context: CallContext | undefined) {
  if (session.era !== "modern") return {};
  return {
    _meta: {
      [CLIENT_CAPABILITIES_META_KEY]: capabilitiesForUpstream(context?.clientCapabilities),
      ...(context?.logLevel ? { [LOG_LEVEL_META_KEY]: context.logLevel } : {}),
    },
  };
}

/**
 * For a caller that sent no `Mcp-Param-*` headers, the SDK mirrors the arguments into them from the
 * tool's definition (given without its outputSchema: results pass through whole, never re-validated).
 */
function mirroring(session: UpstreamSession, tool: ToolInfo | undefined) {
  return session.era === "modern" && tool
    ? { toolDefinition: { ...tool, outputSchema: undefined } as never }
    : {};
}

function roundParams(round: InputRound | undefined) {
  return {
    ...(round?.inputResponses ? { inputResponses: round.inputResponses } : {}),
    ...(round?.requestState !== undefined ? { requestState: round.requestState } : {}),
  };
}

/**
 * Runs one request on an upstream session with the call's timeout and cancellation (the caller
 * leaving, or the session breaking); failures below the tool level come back as CallFailure, an
 * answer nested deeper than {@link MAX_RESULT_DEPTH} levels as one of kind `rpc` (the upstream's error).
 */
export async function requestUpstream<T>(
  run: (requestOptions: { timeout: number; signal?: AbortSignal }) => Promise<T>,
  options: CallOptions,
): Promise<T> {
  const { signal, release } = linkSignals(options.signal, options.broken);
  let result: T;
  try {
    result = await run({ timeout: options.timeoutMs, signal });
  } catch (error) {
    throw toCallFailure(error, options);
  } finally {
    release();
  }
  // Parsed without recursion, but re-serialised (REST body, MCP answer) with it: a hostile nesting is
  // the upstream's error, never a stack overflow of ours.
  if (jsonDepth(result, MAX_RESULT_DEPTH) > MAX_RESULT_DEPTH)
    throw new CallFailure("rpc", `its answer nests deeper than ${MAX_RESULT_DEPTH} levels`);
  return result;
}

/**
 * One signal that aborts when any source does, let go of afterwards — the session's `broken` signal
 * lives as long as the session and carries every call in flight, so it keeps one listener of ours
 * however many calls wait on it (nor do they wait for GC, as AbortSignal.any's do).
 */
function linkSignals(...sources: Array<AbortSignal | undefined>): {
  signal: AbortSignal;
  release: () => void;
} {
  const controller = new AbortController();
  const live = sources.filter((source): source is AbortSignal => source !== undefined);
  const aborted = live.find((source) => source.aborted);
  if (aborted) controller.abort(aborted.reason);
  const undo = live.map((source) => whenAborted(source, () => controller.abort(source.reason)));
  return {
    signal: controller.signal,
    release: () => {
      for (const release of undo) release();
    },
  };
}

/** An MCP CallToolResult as the gateway passes it on: `content` always an array, `isError` a boolean. */
export function shapeResult(result: {
  content?: unknown[];
  structuredContent?: unknown;
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
  if (isUnreadableAnswer(error)) return new CallFailure("unreadable", describeError(error), { cause: error });
  if (options.broken?.aborted) {
    return new CallFailure("unreachable", `upstream connection lost: ${reasonText(options.broken.reason)}`, {
      cause: error,
    });
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return new CallFailure("timeout", "the tool did not answer in time", { cause: error });
  if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed)
    return new CallFailure("unreachable", "upstream connection closed", { cause: error });
  if (error instanceof ProtocolError) return new CallFailure("rpc", error.message, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  const status = transportHttpStatus(error);
  if (status === 404) {
    return new CallFailure("session_expired", "the upstream no longer knows this session", { cause: error });
  }
  // A runner of the fleet that no longer holds the instance (it was handed back): open it where it is now.
  if (status === 421) {
    return new CallFailure("session_expired", "another runner serves this instance now", { cause: error });
  }
  return new CallFailure("unreachable", message, { cause: error });
}

/** An answer that is not JSON, or that the SDK refused as not the protocol's shape. */
function isUnreadableAnswer(error: unknown): boolean {
  if (error instanceof UnreadableAnswerError) return true;
  return error instanceof SdkError && error.code === SdkErrorCode.InvalidResult;
}

function describeError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/^(MCP error -?\d+: )+/, "");
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
