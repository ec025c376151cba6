/**
 * The process's OpenTelemetry traces: a tracer provider, the AsyncLocalStorage context manager and
 * the W3C trace-context propagator, registered once per process — always, so every call has a valid
 * trace id (recorded or not) — and spans exported over OTLP/HTTP only when an endpoint is configured.
 * Spans are made at call sites through `@opentelemetry/api` (see `@mcpgw/core`'s trace-context).
 */
import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  type SpanKind,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SamplingResult,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { CryptoIdGenerator } from "./ids";

/** Which process traces: its `service.name` is `mcpgw-<service>` unless OTEL_SERVICE_NAME names one. */
export type TelemetryService = "gateway" | "admin" | "worker" | "runner";

type Env = Record<string, string | undefined>;

/** The tracing a process started: flush what is pending (end of a Lambda invocation), or stop. */
export interface Tracing {
  /** Exports the spans ended since the last flush, if any (bounded by `timeoutMs`, default 5 s). */
  flush(timeoutMs?: number): Promise<void>;
  /** Exports what is pending, then unregisters the provider, context manager and propagator. */
  shutdown(): Promise<void>;
}

let started: Tracing | undefined;

/** What a process with the SDK disabled has: nothing registered, every span a no-op, no trace id. */
const DISABLED: Tracing = { flush: async () => undefined, shutdown: async () => undefined };

/** `OTEL_SDK_DISABLED=true` (the OTel standard switch, case-insensitive): no provider at all. */
export function sdkDisabled(env: Env): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true";
}

/** An OTEL_{TRACES,METRICS}_EXPORTER value of `none` (the OTel standard way to turn one signal off). */
export function exporterNone(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === "none";
}

/**
 * Registers tracing for this process (once: later calls return the first's; nothing under
 * OTEL_SDK_DISABLED=true). Sampler from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (default:
 * parent-based, {@link DEFAULT_SAMPLE_RATIO} of new traces, at most TRACE_RATE_LIMIT a second); a batch
 * processor exporting over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (the exporter reads those and OTEL_EXPORTER_OTLP_HEADERS
 * itself, and is loaded only then).
 */
export function startTracing(options: { service: TelemetryService; env?: Env }): Tracing {
  if (started) return started;
  const env = options.env ?? process.env;
  if (sdkDisabled(env)) return DISABLED;
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const pending = new PendingSpans();
  const exporting = exportsTraces(env);
  const provider = new TracerProvider({
    idGenerator: new CryptoIdGenerator(),
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || `mcpgw-${options.service}` }),
    // Nothing is exported: nothing is recorded (trace ids still pass on, with the sampled flag off).
    sampler: exporting ? samplerFromEnv(env) : new AlwaysOffSampler(),
    spanProcessors: exporting
      ? [
          pending,
          new BatchSpanProcessor({ exporter: new LazyOtlpExporter(tracesUrl(env)), ...batchOptions(env) }),
        ]
      : [],
  });
  trace.setGlobalTracerProvider(provider);
  const tracing: Tracing = {
    async flush(timeoutMs = 5_000) {
      if (!pending.take()) return;
      await provider.forceFlush({ timeoutMillis: timeoutMs }).catch(() => undefined);
    },
    async shutdown() {
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      propagation.disable();
      context.disable();
      if (started === tracing) started = undefined;
    },
  };
  started = tracing;
  return tracing;
}

/**
 * Exports the spans pending in this process's tracing, if it started and any ended since the last flush:
 * a Lambda handler's `flushingLogs(handler, flushTraces)`, before the invocation returns (and freezes).
 */
export async function flushTraces(timeoutMs = 1_000): Promise<void> {
  await started?.flush(timeoutMs);
}

/**
 * Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT with
 * `/v1/traces` appended (the OTLP exporter specification's rule).
 */
export function tracesUrl(env: Env): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}

/**
 * Whether spans go anywhere: an OTLP endpoint for traces (or for every signal) is set, and
 * OTEL_TRACES_EXPORTER is not `none`.
 */
export function exportsTraces(env: Env): boolean {
  if (exporterNone(env.OTEL_TRACES_EXPORTER)) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** The share of the traces it starts a process records when no sampler is configured. */
export const DEFAULT_SAMPLE_RATIO = 0.05;

/** The most new traces a second a process records under the default sampler (TRACE_RATE_LIMIT). */
export const DEFAULT_TRACE_RATE_LIMIT = 10;

/**
 * The sampler OTEL_TRACES_SAMPLER names (`always_on`, `always_off`, `traceidratio`, and each of them
 * `parentbased_`), with OTEL_TRACES_SAMPLER_ARG the ratio (0…1; 1 when missing or out of range). Unset
 * or unknown: {@link DEFAULT_SAMPLE_RATIO} of the traces the gateway starts, at most TRACE_RATE_LIMIT
 * ({@link DEFAULT_TRACE_RATE_LIMIT}) of them a second, and that share of those a caller sampled (a
 * caller's `traceparent` flag alone, which anyone can send, does not make a trace recorded) — a gateway
 * serves every call, so recording all of them is a choice an operator makes (`parentbased_always_on`,
 * which honours the caller's flag), not the default.
 */
export function samplerFromEnv(env: Env): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? "").trim().toLowerCase();
  const ratio = () => {
    const value = Number(env.OTEL_TRACES_SAMPLER_ARG);
    const valid = env.OTEL_TRACES_SAMPLER_ARG?.trim() && Number.isFinite(value) && value >= 0 && value <= 1;
    return new TraceIdRatioBasedSampler(valid ? value : 1);
  };
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio();
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio() });
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default: {
      // A caller's sampled flag does not force recording: anyone may send one, before authentication.
      // Its share is not capped: the decision by trace id is the same in every process of the trace
      // (the runner follows the gateway's), where a process's own cap would leave holes.
      const share = new TraceIdRatioBasedSampler(DEFAULT_SAMPLE_RATIO);
      return new ParentBasedSampler({
        root: new RateCappedSampler(share, traceRateLimit(env)),
        remoteParentSampled: share,
      });
    }
  }
}

/** TRACE_RATE_LIMIT (new traces recorded a second, 0 or more), else {@link DEFAULT_TRACE_RATE_LIMIT}. */
export function traceRateLimit(env: Env): number {
  const value = Number(env.TRACE_RATE_LIMIT);
  return env.TRACE_RATE_LIMIT?.trim() && Number.isFinite(value) && value >= 0
    ? value
    : DEFAULT_TRACE_RATE_LIMIT;
}

/**
 * Records what `inner` records, at most `perSecond` of it a second (a token bucket holding a second's
 * worth, refilled as time passes; `now` in ms): the cost of recording and exporting traces stays
 * bounded however many calls a process serves, as X-Ray's reservoir and Jaeger's rate-limiting sampler
 * bound theirs. A trace the cap refuses is not recorded (its ids still pass on, unsampled).
 */
export class RateCappedSampler implements Sampler {
  /** The bucket's size: a second's worth, at least one trace (none when the cap is 0). */
  private readonly capacity: number;
  private tokens: number;
  private last: number;

  constructor(
    private readonly inner: Sampler,
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.capacity = perSecond > 0 ? Math.max(1, perSecond) : 0;
    this.tokens = this.capacity;
    this.last = now();
  }

  shouldSample(
    parent: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const result = this.inner.shouldSample(parent, traceId, name, kind, attributes, links);
    if (result.decision === SamplingDecision.NOT_RECORD) return result;
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens < 1) return { decision: SamplingDecision.NOT_RECORD };
    this.tokens -= 1;
    return result;
  }

  toString(): string {
    return `RateCapped{${this.inner.toString()}, ${this.perSecond}/s}`;
  }
}

/** The batch processor's settings from the standard OTEL_BSP_* variables (the SDK's defaults otherwise). */
export function batchOptions(env: Env): {
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
} {
  const read = (name: string) => {
    const value = Number(env[name]);
    return env[name]?.trim() && Number.isSafeInteger(value) && value > 0 ? value : undefined;
  };
  const options = {
    scheduledDelayMillis: read("OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: read("OTEL_BSP_EXPORT_TIMEOUT"),
    maxQueueSize: read("OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: read("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

/** Counts the spans ended since the last flush, so a Lambda invocation with none pays no flush. */
class PendingSpans implements SpanProcessor {
  private ended = 0;

  onStart(): void {}

  onEnd(): void {
    this.ended++;
  }

  /** True when spans ended since the last call. */
  take(): boolean {
    const any = this.ended > 0;
    this.ended = 0;
    return any;
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {}
}

/**
 * The SDK's OTLP/HTTP trace exporter, imported on the first export: a process that exports no span
 * never loads it (nor its serializers).
 */
class LazyOtlpExporter implements SpanExporter {
  private exporter: Promise<SpanExporter> | undefined;

  constructor(private readonly url: string | undefined) {}

  private load(): Promise<SpanExporter> {
    this.exporter ??= import("@opentelemetry/exporter-trace-otlp-http").then(
      ({ OTLPTraceExporter }) => new OTLPTraceExporter(this.url ? { url: this.url } : {}),
    );
    return this.exporter;
  }

  export(spans: ReadableSpan[], done: Parameters<SpanExporter["export"]>[1]): void {
    this.load().then(
      (exporter) => exporter.export(spans, done),
      (error: Error) => done({ code: ExportResultCode.FAILED, error }),
    );
  }

  async forceFlush(): Promise<void> {
    if (this.exporter) await (await this.exporter).forceFlush?.();
  }

  async shutdown(): Promise<void> {
    if (this.exporter) await (await this.exporter).shutdown();
  }
}
