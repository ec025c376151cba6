import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { AggregationTemporality, type MetricReader } from "@opentelemetry/sdk-metrics";
import { toolCallProducer } from "./instruments";

/** The content type of Prometheus' text exposition format (what `GET /metrics` answers). */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A pull reader and the Prometheus text of what it collects (for a local `GET /metrics`). */
export interface LocalReader {
  reader: MetricReader;
  text(): Promise<string>;
}

/**
 * exporter-prometheus's reader (its own server never started, the tool-call series' producer on it)
 * and serializer, without scope labels: the text a process serves at `GET /metrics`. Apart from
 * {@link startMetrics}, so the Lambda bundles, which never serve it, leave it out.
 */
export function prometheusReader(): LocalReader {
  const exporter = new PrometheusExporter({
    preventServerStart: true,
    metricProducers: [toolCallProducer(AggregationTemporality.CUMULATIVE)],
  });
  const serializer = new PrometheusSerializer(undefined, false, undefined, false, true);
  return {
    reader: exporter,
    text: async () => serializer.serialize((await exporter.collect()).resourceMetrics),
  };
}
