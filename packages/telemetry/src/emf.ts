/**
 * CloudWatch embedded metric format (EMF): metrics as JSON log lines that CloudWatch Logs turns into
 * metrics. No maintained OTel → EMF exporter exists for JS, and `aws-embedded-metrics` brings its own
 * environment detection and sinks for what is one JSON line per series here; so this small exporter.
 */
import type { Attributes, HrTime } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type Histogram,
  type MetricData,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";

/** The CloudWatch namespace the gateway's metrics go to. */
export const EMF_NAMESPACE = "MCPGateway";
/** CloudWatch's limit of dimensions in one dimension set. */
const MAX_DIMENSIONS = 30;

/** A histogram's value in one document: CloudWatch's values/counts pairs and the statistic set. */
export interface EmfDistribution {
  Values: number[];
  Counts: number[];
  Max: number;
  Min: number;
  Count: number;
  Sum: number;
}

/** One EMF document (a log line): `_aws`, then each dimension and each metric as a root member. */
export interface EmfDocument {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit?: string }>;
    }>;
  };
  [member: string]: unknown;
}

/**
 * The EMF documents of one collection: one per distinct attribute set, holding every metric recorded
 * with it (a counter's delta, a gauge's value, a histogram's distribution). `service` is a dimension of
 * every document. Series with nothing to report (an empty histogram) are left out.
 */
export function toEmfDocuments(
  metrics: ResourceMetrics,
  options: { namespace?: string; service: string },
): EmfDocument[] {
  const documents = new Map<string, EmfDocument>();
  for (const scope of metrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      for (const point of dataPoints(metric)) {
        const value = emfValue(metric, point);
        if (value === undefined) continue;
        const dimensions = dimensionsOf(point.attributes, options.service);
        const key = JSON.stringify(dimensions);
        let document = documents.get(key);
        if (!document) {
          document = {
            _aws: {
              Timestamp: hrTimeToMs(point.endTime),
              CloudWatchMetrics: [
                {
                  Namespace: options.namespace ?? EMF_NAMESPACE,
                  Dimensions: [Object.keys(dimensions)],
                  Metrics: [],
                },
              ],
            },
            ...dimensions,
          };
          documents.set(key, document);
        }
        const unit = emfUnit(metric.descriptor.unit, metric.dataPointType);
        document._aws.CloudWatchMetrics[0]?.Metrics.push({
          Name: metric.descriptor.name,
          ...(unit ? { Unit: unit } : {}),
        });
        document[metric.descriptor.name] = value;
      }
    }
  }
  return [...documents.values()];
}

/**
 * A push exporter writing {@link toEmfDocuments}'s documents, one JSON line each, to `write` (stdout:
 * the Lambda runtime sends it to CloudWatch Logs). Delta temporality: a counter's line says how many
 * since the last export, which CloudWatch sums.
 */
export class EmfExporter implements PushMetricExporter {
  constructor(
    private readonly options: { service: string; namespace?: string; write?: (line: string) => void },
  ) {}

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    const write = this.options.write ?? ((line: string) => process.stdout.write(line));
    try {
      const lines = toEmfDocuments(metrics, this.options).map((document) => `${JSON.stringify(document)}\n`);
      if (lines.length > 0) write(lines.join(""));
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.DELTA;
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {}
}

function dataPoints(metric: MetricData): DataPoint<number | Histogram>[] {
  return metric.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM ? [] : metric.dataPoints;
}

function emfValue(
  metric: MetricData,
  point: DataPoint<number | Histogram>,
): number | EmfDistribution | undefined {
  if (typeof point.value === "number") return Number.isFinite(point.value) ? point.value : undefined;
  return metric.dataPointType === DataPointType.HISTOGRAM ? distribution(point.value) : undefined;
}

/**
 * A histogram point as CloudWatch's values and counts: each non-empty bucket's midpoint (the first
 * and the open last bucket at the recorded min and max) with its count, and the statistic set.
 */
export function distribution(histogram: Histogram): EmfDistribution | undefined {
  if (histogram.count === 0) return undefined;
  const { boundaries, counts } = histogram.buckets;
  const sum = histogram.sum ?? 0;
  const min = histogram.min ?? boundaries[0] ?? sum / histogram.count;
  const max = histogram.max ?? boundaries.at(-1) ?? sum / histogram.count;
  const values: number[] = [];
  const valueCounts: number[] = [];
  counts.forEach((count, index) => {
    if (count === 0) return;
    const low = index === 0 ? min : (boundaries[index - 1] ?? min);
    const high = index < boundaries.length ? (boundaries[index] ?? max) : max;
    values.push(Math.min(max, Math.max(min, (low + high) / 2)));
    valueCounts.push(count);
  });
  return { Values: values, Counts: valueCounts, Max: max, Min: min, Count: histogram.count, Sum: sum };
}

/** A point's attributes as string dimensions (at most CloudWatch's 30, `service` first). */
function dimensionsOf(attributes: Attributes, service: string): Record<string, string> {
  const dimensions: Record<string, string> = { service };
  for (const [name, value] of Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined || name === "service" || Object.keys(dimensions).length >= MAX_DIMENSIONS)
      continue;
    dimensions[name] = String(value);
  }
  return dimensions;
}

/** CloudWatch's unit for an OTel (UCUM) unit; `Count` for a counter without one. */
function emfUnit(unit: string, type: DataPointType): string | undefined {
  const units: Record<string, string> = { ms: "Milliseconds", s: "Seconds", By: "Bytes" };
  return units[unit] ?? (type === DataPointType.SUM ? "Count" : undefined);
}

function hrTimeToMs([seconds, nanos]: HrTime): number {
  return seconds * 1_000 + Math.round(nanos / 1_000_000);
}
