/**
 * Spans and W3C trace context at call sites, through `@opentelemetry/api` alone: without a tracer
 * provider (`@mcpgw/telemetry`'s `startTracing`) every span here is a no-op and nothing is injected.
 * Attributes name things (ids, names, methods, outcomes, sizes) — never a value a caller or server sent.
 */
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";

/** The W3C trace context fields, as headers and as `_meta` keys of a JSON-RPC request. */
export interface TraceFields {
  traceparent?: string;
  tracestate?: string;
}

const TRACE_KEYS = ["traceparent", "tracestate"] as const;

/** The tracer of every span the gateway's processes make. */
export function tracer() {
  return trace.getTracer("mcpgw");
}

/** The W3C trace context of `active` (the current context by default): none when it holds no valid span. */
export function traceFields(active: Context = context.active()): TraceFields {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  return pickTraceFields(carrier);
}

/** Only `traceparent` and `tracestate` of `carrier` (strings), nothing else it holds. */
export function pickTraceFields(carrier: Record<string, unknown>): TraceFields {
  const fields: TraceFields = {};
  for (const key of TRACE_KEYS) {
    const value = carrier[key];
    if (typeof value === "string") fields[key] = value;
  }
  return fields;
}

/**
 * `params` with `_meta.traceparent` / `_meta.tracestate` set to `fields` — any the params carried
 * (a caller's own) replaced or removed, never passed on — as a new object: `params` is not changed.
 * Unchanged when there is nothing to set or remove.
 */
export function withTraceMeta<P extends Record<string, unknown> | undefined>(
  params: P,
  fields: TraceFields = traceFields(),
): P {
  const given = params?._meta;
  const meta = given !== null && typeof given === "object" ? (given as Record<string, unknown>) : undefined;
  const carried = meta !== undefined && TRACE_KEYS.some((key) => key in meta);
  if (!carried && fields.traceparent === undefined) return params;
  const { traceparent: _p, tracestate: _s, ...rest } = meta ?? {};
  const next = { ...rest, ...(fields.traceparent === undefined ? {} : fields) };
  const { _meta: _m, ...plain } = params ?? {};
  return (Object.keys(next).length > 0 ? { ...plain, _meta: next } : plain) as P;
}

/**
 * The context a remote peer's W3C trace context continues (its span the remote parent); the root
 * context when `fields` hold no valid `traceparent` (the propagator checks it). Only these two fields
 * are read: no other header or baggage reaches the context.
 */
export function remoteContext(fields: TraceFields): Context {
  return propagation.extract(ROOT_CONTEXT, pickTraceFields(fields as Record<string, unknown>));
}

/** A span begun with {@link beginSpan}: run work inside it, then end it with its outcome. */
export interface ActiveSpan {
  span: Span;
  /** Runs `work` with this span active (so `currentTraceId()` and injected trace context name it). */
  run<T>(work: () => T): T;
  /** Ends the span: `error` sets its status to an error, named by `error.type` (a code, never a message). */
  end(attributes?: Attributes, error?: string): void;
}

/**
 * Begins a span under `parent` (the active context by default), not yet active. Its attributes are set
 * only when it records: most calls are not sampled, and the SDK would check and copy them for nothing
 * (no sampler here reads attributes).
 */
export function beginSpan(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context } = {},
): ActiveSpan {
  const parent = options.parent ?? context.active();
  const within = trace.getSpan(parent);
  // A local span of an unsampled trace has no sampled child under any sampler here (each is parent-
  // based, or decides by the trace id the child shares): the child is the parent itself, no new span.
  // The sampled flag, not isRecording(): a sampled span that has ended does not record either.
  if (within && !sampled(within) && !within.spanContext().isRemote) return unrecorded(within, parent);
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL }, parent);
  if (options.attributes && span.isRecording()) span.setAttributes(options.attributes);
  const active = trace.setSpan(parent, span);
  return {
    span,
    run: (work) => context.with(active, work),
    end(attributes, error) {
      if (!span.isRecording()) return span.end();
      if (attributes) span.setAttributes(attributes);
      if (error !== undefined) {
        span.setAttribute("error.type", error);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** Whether `span`'s trace is sampled (recorded), ended or not. */
function sampled(span: Span): boolean {
  return (span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** The span of an unsampled call, standing for its children too: running in it enters its context. */
function unrecorded(span: Span, within: Context): ActiveSpan {
  return {
    span,
    run: (work) => (context.active() === within ? work() : context.with(within, work)),
    end: () => undefined,
  };
}

/**
 * Runs `work` in a span of `kind` (a client span around a request sent to another process, say), ended
 * when it settles: a rejection marks it failed with `errorType(error)` (a kind or class, not a message).
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; errorType?: (error: unknown) => string },
  work: () => Promise<T>,
): Promise<T> {
  const begun = beginSpan(name, options);
  try {
    const result = await begun.run(work);
    begun.end();
    return result;
  } catch (error) {
    begun.end(undefined, (options.errorType ?? errorTypeOf)(error));
    throw error;
  }
}

/**
 * Runs `work` outside any trace: what it starts that outlives it (a shared warm session's streams and
 * timers) carries no caller's trace context into later requests made for others.
 */
export function outsideTraces<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}

/** An error's type for `error.type`: its `code` or `kind` when a string, else its class name. */
export function errorTypeOf(error: unknown): string {
  if (error !== null && typeof error === "object") {
    const { code, kind } = error as { code?: unknown; kind?: unknown };
    if (typeof code === "string") return code;
    if (typeof kind === "string") return kind;
    return (error as { name?: unknown }).name === undefined ? "Error" : String((error as Error).name);
  }
  return "Error";
}

export { SpanKind };
