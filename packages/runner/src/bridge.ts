import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  McpError,
  type Progress,
  ProgressNotificationSchema,
  type Result,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CallerGate } from "./caller-gate";
import type { ReplyBudget } from "./reply-budget";

/** What the runner's session declares to every child, so a child may ask for input during a call. */
export const CHILD_SESSION_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: {} },
  sampling: {},
  roots: {},
};

/** The requests a (2025-era) child may send its client for input. */
export type InputMethod = "elicitation/create" | "sampling/createMessage" | "roots/list";

/** A child's request for input, routed to a call and waiting for that call's caller to answer it. */
export interface InputAsk {
  /** Its key in the caller's `inputRequests` / `inputResponses`, unique within the call. */
  key: string;
  method: InputMethod;
  params: Record<string, unknown> | undefined;
}

/** What a caller waiting on a call is handed next. */
export type CallEvent =
  | { kind: "result"; result: Result }
  | { kind: "error"; error: unknown }
  | { kind: "input"; asks: InputAsk[] };

/** How a caller attached to a call hears of it: the progress its request asked for, and its leaving. */
export interface Attachment {
  /** Aborts when the caller's request is gone (cancelled, or its connection closed). */
  signal: AbortSignal;
  /** Relays the child's progress to the caller (only when its request carried a progress token). */
  progress?: ((progress: Progress) => void) | undefined;
  /** Relays a log message of the child to the caller (filtered by the level it asked for). */
  log?: ((params: LoggingMessageNotification["params"]) => void) | undefined;
}

/** A plain request forwarded to the child, as a log message sees it: who to tell. */
interface Listener {
  log?: Attachment["log"];
}

interface PendingAsk extends InputAsk {
  settle(result: Result): void;
  fail(error: Error): void;
}

/** How a forwarded call is started. */
export interface ForwardedCallOptions {
  /** Whose call it is (`user:<sub>`, `key:<id>`, `admin`, or `probe`): the child's requests go only to them. */
  caller: string;
  capabilities: ClientCapabilities | undefined;
  timeoutMs: number;
  /** Ask the child for progress (the request that started it carried a progress token). */
  progress: boolean;
  /** How long it waits, parked, for its caller to come back. */
  parkMs: number;
  /** It is forgotten (its outcome delivered, or never fetched within the park bound). */
  onEnd: (call: ForwardedCall) => void;
  /** The child answered it. */
  onAnswered?: () => void;
  /** It was cancelled while parked (its caller never came back, or left): check the child. */
  onAbandoned?: (() => void) | undefined;
  /** The child answered it, or it failed: it is no longer in flight there. */
  onSettled?: () => void;
  /** Its outcome was never fetched: it is forgotten at the park bound, undelivered. */
  onForgotten?: () => void;
}

/** How long a call waiting for its caller's answers (input_required) is kept, by default: 10 min. */
export const DEFAULT_PARK_MS = 10 * 60_000;

/**
 * A request forwarded to the child that may need input from its caller (`tools/call`,
 * `prompts/get`, `resources/read`): it stays open at the child across the caller's rounds. The
 * child's requests routed to it wait until its caller answers (a 2026-07-28 caller by retrying
 * with `inputResponses`, a 2025 one on its session's stream); meanwhile the call is parked, and a
 * call parked past its bound is cancelled at the child.
 */
export class ForwardedCall {
  readonly id = randomUUID();
  readonly startedAt = Date.now();
  /** Whose call it is. */
  readonly caller: string;
  /** Incremented each time asks are handed out: a retry must name the latest round. */
  round = 0;
  /** The caller's capabilities (its latest request's): which input requests it can answer. */
  capabilities: ClientCapabilities | undefined;
  private readonly controller = new AbortController();
  private readonly queued: PendingAsk[] = [];
  private readonly handedOut = new Map<string, PendingAsk>();
  private outcome: CallEvent | undefined;
  /** Wakes the callers waiting in `next` (a duplicate retry may wait beside the first). */
  private readonly waiters = new Set<() => void>();
  private attached: Attachment | undefined;
  private parkTimer: NodeJS.Timeout | undefined;
  private watchLeaving: (() => void) | undefined;
  private asks = 0;
  private readonly parkMs: number;
  private readonly onEnd: (call: ForwardedCall) => void;
  private readonly onAbandoned: (() => void) | undefined;
  private readonly onForgotten: (() => void) | undefined;

  constructor(
    child: Client,
    readonly method: string,
    readonly params: Record<string, unknown> | undefined,
    options: ForwardedCallOptions,
  ) {
    this.caller = options.caller;
    this.capabilities = options.capabilities;
    this.parkMs = options.parkMs;
    this.onEnd = options.onEnd;
    this.onAbandoned = options.onAbandoned;
    this.onForgotten = options.onForgotten;
    // The call's id names it to the child's transport: its reply is charged to it (see ReplyBudget).
    const requestOptions: RequestOptions = {
      signal: this.controller.signal,
      timeout: options.timeoutMs,
      relatedRequestId: this.id,
    };
    // The call's own id is its progress token (the bridge relays by it; see ChildBridge).
    const sent = options.progress
      ? { ...params, _meta: { ...meta(params), progressToken: this.id } }
      : params;
    child.request({ method, ...(sent ? { params: sent } : {}) }, ResultSchema, requestOptions).then(
      (result) => {
        options.onSettled?.();
        options.onAnswered?.();
        this.end({ kind: "result", result });
      },
      (error: unknown) => {
        options.onSettled?.();
        this.end({ kind: "error", error });
      },
    );
  }

  /** Relays the child's progress to the caller attached now, if any. */
  progress(progress: Progress): void {
    this.attached?.progress?.(progress);
  }

  /** Relays a log message to the caller attached now, if any. */
  log(params: LoggingMessageNotification["params"]): void {
    this.attached?.log?.(params);
  }

  /** The child has not answered yet (it counts for routing its requests). */
  get inFlight(): boolean {
    return this.outcome === undefined;
  }

  /** Whether the call was cancelled because its caller left or never came back. */
  get abandoned(): boolean {
    return this.controller.signal.aborted;
  }

  /** A child's request routed here; the caller is told at its next wait. */
  enqueue(ask: Omit<PendingAsk, "key">): string {
    const key = `input-${++this.asks}`;
    this.queued.push({ ...ask, key });
    this.wake();
    return key;
  }

  /** The child withdrew a request (it cancelled it, or gave up waiting). */
  withdraw(key: string): void {
    const index = this.queued.findIndex((ask) => ask.key === key);
    if (index !== -1) this.queued.splice(index, 1);
    this.handedOut.delete(key);
  }

  /**
   * The caller's answers (`inputResponses`, keyed as handed out): each settles the child's request
   * it answers. Keys the caller left out stay open and are asked again; unknown keys are ignored.
   */
  answer(responses: Record<string, unknown>): void {
    for (const [key, response] of Object.entries(responses)) {
      const ask = this.handedOut.get(key);
      if (!ask || typeof response !== "object" || response === null) continue;
      this.handedOut.delete(key);
      ask.settle(response as Result);
    }
  }

  /**
   * Waits for what the caller must hear next: the child's result (or error), or the input the child
   * asks for (those not answered yet included). A caller that leaves while attached cancels the call.
   */
  async next(attachment: Attachment): Promise<CallEvent> {
    this.unpark();
    this.attached = attachment;
    const leave = () => this.abort(attachment.signal.reason ?? new Error("the caller went away"));
    if (attachment.signal.aborted) leave();
    attachment.signal.addEventListener("abort", leave, { once: true });
    try {
      for (;;) {
        if (this.outcome) return this.outcome;
        if (this.queued.length > 0 || this.handedOut.size > 0) {
          const asks = [...this.handedOut.values(), ...this.queued.splice(0)];
          for (const ask of asks) this.handedOut.set(ask.key, ask);
          this.round++;
          return {
            kind: "input",
            asks: asks.map(({ key, method, params }) => ({ key, method, params })),
          };
        }
        await new Promise<void>((resolve) => this.waiters.add(resolve));
      }
    } finally {
      attachment.signal.removeEventListener("abort", leave);
      if (this.attached === attachment) this.attached = undefined;
    }
  }

  /**
   * The caller was handed input requests and has gone to answer them: the call waits for it, up to
   * the park bound. A 2025 caller's request stays open meanwhile (its session's stream carries the
   * asks): given as `leaving`, it still hears progress and logs, and its leaving cancels the call.
   */
  park(leaving?: Attachment): void {
    this.unpark();
    this.parkTimer = setTimeout(
      () => this.abandon(new McpError(ErrorCode.RequestTimeout, "no answer to the input it asked for")),
      this.parkMs,
    );
    this.parkTimer.unref();
    if (leaving) {
      const { signal } = leaving;
      const leave = () => this.abandon(signal.reason ?? new Error("the caller went away"));
      if (signal.aborted) leave();
      signal.addEventListener("abort", leave, { once: true });
      this.watchLeaving = () => signal.removeEventListener("abort", leave);
      this.attached = leaving;
    }
  }

  /** Cancels the call at the child (its pending asks fail with it). */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** Cancelled while parked: nobody waits on it, so whether the child still answers is checked here. */
  private abandon(reason: unknown): void {
    if (!this.inFlight) return;
    this.abort(reason);
    this.onAbandoned?.();
  }

  private wake(): void {
    for (const resolve of this.waiters) resolve();
    this.waiters.clear();
  }

  private unpark(): void {
    clearTimeout(this.parkTimer);
    this.parkTimer = undefined;
    this.watchLeaving?.();
    this.watchLeaving = undefined;
  }

  private end(outcome: CallEvent): void {
    this.outcome = outcome;
    const ended = new McpError(ErrorCode.InvalidRequest, "the call this request belonged to has ended");
    for (const ask of [...this.queued.splice(0), ...this.handedOut.values()]) ask.fail(ended);
    this.handedOut.clear();
    this.wake();
    // A parked call whose caller never comes back for the outcome is forgotten at the park bound.
    if (!this.parkTimer) this.onEnd(this);
    else {
      clearTimeout(this.parkTimer);
      this.parkTimer = setTimeout(() => {
        this.onEnd(this);
        this.onForgotten?.();
      }, this.parkMs);
      this.parkTimer.unref();
    }
  }

  /** Forget it now (its outcome was delivered). */
  finish(): void {
    this.unpark();
    this.onEnd(this);
  }
}

function meta(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const value = params?._meta;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** Whether `capabilities` (a caller's) let it be asked anything a child may ask (elicitation, sampling, roots). */
export function declaresAny(capabilities: ClientCapabilities | undefined): boolean {
  return (
    capabilities?.elicitation !== undefined ||
    capabilities?.sampling !== undefined ||
    capabilities?.roots !== undefined
  );
}

/**
 * Whether `capabilities` (a caller's) cover the child's request: form elicitation needs
 * `elicitation` (form, or bare), URL elicitation `elicitation.url`, sampling `sampling` (with tools:
 * `sampling.tools`), roots `roots`.
 */
export function declares(
  capabilities: ClientCapabilities | undefined,
  method: InputMethod,
  params: Record<string, unknown> | undefined,
): boolean {
  if (!capabilities) return false;
  switch (method) {
    case "elicitation/create": {
      const elicitation = capabilities.elicitation as { form?: object; url?: object } | undefined;
      if (!elicitation) return false;
      if (params?.mode === "url") return elicitation.url !== undefined;
      return elicitation.form !== undefined || elicitation.url === undefined;
    }
    case "sampling/createMessage": {
      const sampling = capabilities.sampling as { tools?: object } | undefined;
      if (!sampling) return false;
      return !(params?.tools || params?.toolChoice) || sampling.tools !== undefined;
    }
    case "roots/list":
      return capabilities.roots !== undefined;
  }
}

/**
 * The runner's side of its session with one child, between the child and the callers of its face:
 * forwarded calls in flight, and the child's own requests (elicitation, sampling, roots) routed to
 * the callers who can answer them.
 *
 * Over stdio a child's request carries no link to the call that caused it, so it reaches a caller
 * only when every request in flight at the child is that one caller's: once the child has asked
 * anything, the {@link CallerGate} keeps other callers' requests off the child while a call whose
 * caller can be asked is in flight. It then
 * goes to that caller's call in flight when there is exactly one (refused when its caller did not
 * declare the capability), else to the caller's oldest call in flight that declared it. A request
 * while no call is in flight, while several callers' requests are (the gate's wait ran out), or that
 * no call of the caller can answer is refused — a JSON-RPC error to the child, never broadcast. Log
 * messages likewise reach a caller only when exactly one request is in flight at the child (else they
 * are dropped: never shown to a caller they may not belong to).
 */
export class ChildBridge {
  private readonly calls = new Map<string, ForwardedCall>();
  private readonly listeners = new Set<Listener>();
  /** Which callers' requests may be in flight at the child together. */
  private readonly gate: CallerGate;
  /** The method of the first forwarded request the child answered, once it has. */
  private firstAnswered: string | undefined;
  private readonly firstAnswerListeners: Array<(method: string) => void> = [];

  constructor(
    private readonly child: Client,
    private readonly options: { parkMs?: number; gateWaitMs?: number; replies?: ReplyBudget } = {},
  ) {
    this.gate = new CallerGate(options.gateWaitMs);
    child.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      this.ask("elicitation/create", request.params, extra.signal),
    );
    child.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      this.ask("sampling/createMessage", request.params, extra.signal),
    );
    child.setRequestHandler(ListRootsRequestSchema, (request, extra) =>
      this.ask("roots/list", request.params, extra.signal),
    );
    // Progress is relayed by the call's own token, in the order the child sent it: the SDK's own
    // relay (`onprogress`) drops a last progress that arrives together with the result.
    child.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, ...progress } = notification.params;
      this.calls.get(String(progressToken))?.progress(progress);
    });
    child.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const calls = [...this.calls.values()].filter((call) => call.inFlight);
      if (this.listeners.size + calls.length !== 1) return;
      for (const listener of this.listeners) listener.log?.(notification.params);
      for (const call of calls) call.log(notification.params);
    });
  }

  /** Nothing forwarded is under way (no call in flight or parked, no request waiting). */
  get idle(): boolean {
    return this.calls.size === 0 && this.listeners.size === 0;
  }

  /** The method of the first forwarded request the child answered (undefined until it has). */
  get firstAnswer(): string | undefined {
    return this.firstAnswered;
  }

  /** Calls `listener` with the method of the first forwarded request the child answers. */
  onFirstAnswer(listener: (method: string) => void): void {
    this.firstAnswerListeners.push(listener);
  }

  /**
   * The replies charged to `owner` (a call's id, or a forwarded request's `owner`) have been sent to
   * their caller, or dropped: the child's reply budget has their bytes again.
   */
  releaseReplies(owner: string): void {
    this.options.replies?.release(owner);
  }

  /**
   * Forwards one request that cannot need input (lists, completion) and returns the child's answer. It
   * never waits at the gate (a probe's list must not wait for a call), but counts as `caller`'s there.
   * Its reply is charged to `owner`, when given, until {@link releaseReplies}.
   */
  async forward(
    method: string,
    params: Record<string, unknown> | undefined,
    options: {
      caller: string;
      signal: AbortSignal;
      timeoutMs: number;
      log?: Listener["log"];
      owner?: string;
    },
  ): Promise<Result> {
    const listener: Listener = { log: options.log };
    this.listeners.add(listener);
    const release = this.gate.pass(options.caller);
    try {
      const result = await this.child.request({ method, ...(params ? { params } : {}) }, ResultSchema, {
        signal: options.signal,
        timeout: options.timeoutMs,
        ...(options.owner === undefined ? {} : { relatedRequestId: options.owner }),
      });
      this.answeredOne(method);
      return result;
    } finally {
      release();
      this.listeners.delete(listener);
    }
  }

  /**
   * Starts a call that may need input from its caller, once the gate lets it go to the child (see the
   * class doc); rejects when `signal` aborts while it waits. Its reply is charged to the call's id until
   * {@link releaseReplies} (or until its outcome is forgotten unfetched).
   */
  async start(
    method: string,
    params: Record<string, unknown> | undefined,
    options: {
      caller: string;
      capabilities: ClientCapabilities | undefined;
      timeoutMs: number;
      progress: boolean;
      signal?: AbortSignal;
      alive?: (() => void) | undefined;
    },
  ): Promise<ForwardedCall> {
    const release = await this.gate.enter(options.caller, declaresAny(options.capabilities), options.signal);
    const call = new ForwardedCall(this.child, method, params, {
      caller: options.caller,
      onSettled: release,
      capabilities: options.capabilities,
      timeoutMs: options.timeoutMs,
      progress: options.progress,
      parkMs: this.options.parkMs ?? DEFAULT_PARK_MS,
      onAnswered: () => this.answeredOne(method),
      onAbandoned: options.alive,
      onForgotten: () => this.releaseReplies(call.id),
      onEnd: (ended) => {
        if (this.calls.get(ended.id) === ended) this.calls.delete(ended.id);
      },
    });
    this.calls.set(call.id, call);
    return call;
  }

  private answeredOne(method: string): void {
    if (this.firstAnswered !== undefined) return;
    this.firstAnswered = method;
    for (const listener of this.firstAnswerListeners.splice(0)) listener(method);
  }

  /** A call still kept (in flight, or parked with its outcome), by id. */
  find(id: string): ForwardedCall | undefined {
    return this.calls.get(id);
  }

  /** The routing rule (see the class doc): the call that is to answer a child's request, if any. */
  route(method: InputMethod, params: Record<string, unknown> | undefined): ForwardedCall | undefined {
    const caller = this.gate.soleCaller;
    if (caller === undefined) return undefined;
    const inFlight = [...this.calls.values()].filter(
      (call) => call.caller === caller && call.inFlight && !call.abandoned,
    );
    if (inFlight.length === 1) {
      const [only] = inFlight;
      return only && declares(only.capabilities, method, params) ? only : undefined;
    }
    return inFlight
      .sort((a, b) => a.startedAt - b.startedAt)
      .find((call) => declares(call.capabilities, method, params));
  }

  private ask(method: InputMethod, params: Record<string, unknown> | undefined, signal: AbortSignal) {
    this.gate.childAsks();
    const call = this.route(method, params);
    if (!call) {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `no caller can answer ${method} now (it relates to no call of one caller that declared the capability)`,
      );
    }
    return new Promise<Result>((resolve, reject) => {
      const key = call.enqueue({ method, params, settle: resolve, fail: reject });
      signal.addEventListener("abort", () => call.withdraw(key), { once: true });
    });
  }
}
