/**
 * The process's OpenTelemetry meter provider, set up once per process, and where its metrics go:
 * OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT when set (every OTEL_METRIC_EXPORT_INTERVAL ms); else on
 * Lambda (AWS_LAMBDA_FUNCTION_NAME) CloudWatch EMF lines on stdout, written at the end of every
 * invocation (a stdout write: an instance reclaimed after a few calls loses none, and each line carries
 * the time of its calls), and on ECS (the runner's task) EMF lines every OTEL_METRIC_EXPORT_INTERVAL ms,
 * which the task's awslogs driver takes to CloudWatch; else (a local process) the `local` reader it is given
 * ({@link prometheusReader}: Prometheus text for `GET /metrics`), or none. OTEL_SDK_DISABLED=true: none
 * of it.
 */
import { runAfterAnswer } from "@mcpgw/core";
import { metrics } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  InstrumentType,
  MeterProvider,
  type MetricReader,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import { EMF_NAMESPACE, EmfExporter } from "./emf";
import { dropToolCallProducer, registerInstruments, toolCallProducer } from "./instruments";
import type { LocalReader } from "./prometheus";
import { exporterNone, sdkDisabled, type TelemetryService } from "./tracing";

/** Where a process's metrics go (`off`: OTEL_SDK_DISABLED=true, no provider at all). */
export type MetricsExport = "otlp" | "emf" | "local" | "off";

/** The longest an end-of-invocation flush may hold an invocation. */
export const FLUSH_TIMEOUT_MS = 1_000;

/** The default export interval (OTEL_METRIC_EXPORT_INTERVAL), the OTel SDKs' default. */
export const DEFAULT_EXPORT_INTERVAL_MS = 60_000;

/** A process's metrics, once started. */
export interface Metrics {
  export: MetricsExport;
  /** The current values as the local reader's text (only when `export` is `local` and one was given). */
  text?: () => Promise<string>;
  /**
   * The end of a Lambda invocation: EMF lines written now; OTLP exported if the last export is at least
   * the export interval old (a clock read otherwise). Bounded by {@link FLUSH_TIMEOUT_MS}; never throws.
   */
  flushIfDue(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

let started: Promise<Metrics> | undefined;

/** The service name of the resource: OTEL_SERVICE_NAME, else `mcpgw-<service>`. */
export function serviceName(service: TelemetryService, env: NodeJS.ProcessEnv = process.env): string {
  return env.OTEL_SERVICE_NAME?.trim() || `mcpgw-${service}`;
}

/** Where metrics go under `env` (see the module's doc). */
export function metricsExport(env: NodeJS.ProcessEnv = process.env): MetricsExport {
  if (sdkDisabled(env) || exporterNone(env.OTEL_METRICS_EXPORTER)) return "off";
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim())
    return "otlp";
  const onAws =
    env.AWS_LAMBDA_FUNCTION_NAME || env.ECS_CONTAINER_METADATA_URI_V4 || env.ECS_CONTAINER_METADATA_URI;
  return onAws ? "emf" : "local";
}

/** OTEL_METRIC_EXPORT_INTERVAL (ms, at least 100), else the default. */
export function exportIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return Number.isFinite(value) && value >= 100 ? value : DEFAULT_EXPORT_INTERVAL_MS;
}

/**
 * The CloudWatch namespace of the EMF lines: METRICS_NAMESPACE (deployed: `MCPGateway/<stage>`, so the
 * stages of one account never mix), else `MCPGateway`. A name CloudWatch refuses falls back to that too.
 */
export function emfNamespace(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.METRICS_NAMESPACE?.trim() ?? "";
  return /^[A-Za-z0-9.\-_/#: ]{1,255}$/.test(value) && !value.startsWith("AWS/") ? value : EMF_NAMESPACE;
}

/**
 * Sets the process's global meter provider (resource `service.name`) with the reader `env` calls for,
 * and makes the instruments. Once per process: later calls get the first one's metrics.
 */
export function startMetrics(options: {
  service: TelemetryService;
  env?: NodeJS.ProcessEnv;
  /** The reader of a local process (neither OTLP nor AWS): `prometheusReader` in `npm run dev`. */
  local?: () => LocalReader;
}): Promise<Metrics> {
  started ??= createMetrics(options.service, options.env ?? process.env, options.local);
  return started;
}

/** The started metrics' {@link Metrics.flushIfDue}, or nothing when none were started. */
export async function flushMetricsIfDue(): Promise<void> {
  await (await started)?.flushIfDue();
}

/**
 * Sets a new global meter provider for `service` with the reader `env` calls for (see the module's doc)
 * and makes the instruments on it: {@link startMetrics}' work, each time it is called (tests).
 */
export async function createMetrics(
  service: TelemetryService,
  env: NodeJS.ProcessEnv,
  local?: () => LocalReader,
): Promise<Metrics> {
  const mode = metricsExport(env);
  // Disabled: no provider; every instrument stays the API's no-op, and no call is counted.
  if (mode === "off") {
    dropToolCallProducer();
    return { export: mode, flushIfDue: async () => {}, shutdown: async () => {} };
  }
  const intervalMs = exportIntervalMs(env);
  const periodic = (exporter: PushMetricExporter) =>
    new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: intervalMs,
      exportTimeoutMillis: Math.min(30_000, intervalMs),
      metricProducers: [
        toolCallProducer(
          exporter.selectAggregationTemporality?.(InstrumentType.COUNTER) ??
            AggregationTemporality.CUMULATIVE,
        ),
      ],
    });
  let reader: MetricReader | undefined;
  let text: (() => Promise<string>) | undefined;
  if (mode === "otlp") {
    // Loaded only when an endpoint is set: the OTLP exporter stays out of the default path's start.
    const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-http");
    reader = periodic(new OTLPMetricExporter());
  } else if (mode === "emf") {
    reader = periodic(new EmfExporter({ service, namespace: emfNamespace(env) }));
  } else if (local) {
    ({ reader, text } = local());
  } else {
    dropToolCallProducer();
  }
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": serviceName(service, env) }),
    readers: reader ? [reader] : [],
  });
  metrics.setGlobalMeterProvider(provider);
  registerInstruments();
  let lastFlush = Date.now();
  return {
    export: mode,
    // Each read (a scrape, a flush, the shutdown) counts every call answered before it: recording
    // waits for the answer to be written.
    ...(text ? { text: afterRecording(text) } : {}),
    flushIfDue: afterRecording(async () => {
      const now = Date.now();
      if (mode === "local" || !reader || (mode === "otlp" && now - lastFlush < intervalMs)) return;
      lastFlush = now;
      await reader.forceFlush({ timeoutMillis: FLUSH_TIMEOUT_MS }).catch(() => {});
    }),
    shutdown: afterRecording(() => provider.shutdown()),
  };
}

/** `read`, once every call answered so far is recorded (recording waits for an answer to be written). */
function afterRecording<T>(read: () => T): () => T {
  return () => {
    runAfterAnswer();
    return read();
  };
}
