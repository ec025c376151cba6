/**
 * The tool-call metrics — `mcpgw_tool_calls_total{server,tool,outcome}` and the call, upstream and
 * gateway-added duration histograms — kept in place and handed to the process's metric reader as a
 * `MetricProducer` (the OpenTelemetry SDK's hook for metrics made outside its instruments). Every call
 * records these four, and through the SDK's instruments that is four label hashings and four storage
 * lookups; here it is one map lookup and a few additions. What a reader collects is what the SDK's own
 * counter and explicit-bucket histograms (its default buckets, min and max) would have given.
 */
import { type Attributes, type HrTime, ValueType } from "@opentelemetry/api";
import { hrTime } from "@opentelemetry/core";
import { emptyResource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type CollectionResult,
  type DataPoint,
  DataPointType,
  type Histogram,
  type MetricData,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics";

/** The SDK's default explicit-bucket boundaries (ms here), so the series read as they always did. */
const CALL_BUCKETS = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1_000, 2_500, 5_000, 7_500, 10_000];

/** The instrumentation scope of the series, the same as the gateway's other instruments. */
const SCOPE = { name: "mcpgw" };

const CALLS = {
  name: "mcpgw_tool_calls_total",
  description: "Tool calls by server, tool and outcome",
  unit: "",
  valueType: ValueType.DOUBLE,
};
const duration = (name: string, description: string) => ({
  name,
  description,
  unit: "ms",
  valueType: ValueType.DOUBLE,
});
/** The histograms, in the order of a call's durations: whole, upstream, gateway-added. */
const DURATIONS = [
  duration("mcpgw_tool_call_duration", "A tool call's whole duration in the gateway"),
  duration("mcpgw_tool_call_upstream_duration", "The part of a tool call spent on its upstream"),
  duration("mcpgw_tool_call_gateway_duration", "The part of a tool call the gateway added"),
] as const;
const INDEXES = [0, 1, 2] as const;

/** A call's durations (ms), in the order of {@link DURATIONS}. */
export type CallDurations = [total: number, upstream: number, gateway: number];

/** One histogram's state: a count per bucket (one more than the boundaries), sum, min and max. */
interface Distribution {
  counts: number[];
  sum: number;
  min: number;
  max: number;
}

/** One label set's calls and its three distributions (whole, upstream, gateway-added). */
interface Series {
  attributes: Attributes;
  startTime: HrTime;
  calls: number;
  durations: [Distribution, Distribution, Distribution];
}

/**
 * The tool-call series of one reader: cumulative (every series since it began) or delta (what was
 * recorded since the last collection, then forgotten), as the reader's exporter asks.
 */
export class ToolCallMetrics implements MetricProducer {
  private series = new Map<string, Series>();
  private since: HrTime = hrTime();

  constructor(private readonly temporality: AggregationTemporality) {}

  /** Counts a call of (`server`, `tool`) labels (already capped) that ended with `outcome`, and its durations. */
  record(server: string, tool: string, outcome: string, durations: CallDurations): void {
    const key = `${server}\u0000${tool}\u0000${outcome}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        attributes: { server, tool, outcome },
        startTime: this.temporality === AggregationTemporality.DELTA ? this.since : hrTime(),
        calls: 0,
        durations: [distribution(), distribution(), distribution()],
      };
      this.series.set(key, series);
    }
    series.calls++;
    for (const index of INDEXES) add(series.durations[index], durations[index]);
  }

  async collect(): Promise<CollectionResult> {
    const endTime = hrTime();
    const series = [...this.series.values()];
    if (this.temporality === AggregationTemporality.DELTA) {
      this.series = new Map();
      this.since = endTime;
    }
    const metrics: MetricData[] = [];
    if (series.length > 0) {
      const point = <T>(one: Series, value: T): DataPoint<T> => ({
        startTime: one.startTime,
        endTime,
        attributes: one.attributes,
        value,
      });
      metrics.push({
        descriptor: CALLS,
        aggregationTemporality: this.temporality,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: series.map((one) => point(one, one.calls)),
      });
      for (const index of INDEXES)
        metrics.push({
          descriptor: DURATIONS[index],
          aggregationTemporality: this.temporality,
          dataPointType: DataPointType.HISTOGRAM,
          dataPoints: series.map((one) => point(one, histogram(one.durations[index], one.calls))),
        });
    }
    return {
      resourceMetrics: { resource: emptyResource(), scopeMetrics: [{ scope: SCOPE, metrics }] },
      errors: [],
    };
  }
}

function distribution(): Distribution {
  return { counts: new Array(CALL_BUCKETS.length + 1).fill(0), sum: 0, min: Infinity, max: -Infinity };
}

/** Adds `value` to its bucket: the first whose boundary is at least it (the last: past every boundary). */
function add(into: Distribution, value: number): void {
  let bucket = 0;
  while (bucket < CALL_BUCKETS.length && value > (CALL_BUCKETS[bucket] ?? Infinity)) bucket++;
  into.counts[bucket] = (into.counts[bucket] ?? 0) + 1;
  into.sum += value;
  if (value < into.min) into.min = value;
  if (value > into.max) into.max = value;
}

/** A copy of `of` as the SDK's histogram point value (the state goes on changing after collection). */
function histogram(of: Distribution, count: number): Histogram {
  return {
    buckets: { boundaries: CALL_BUCKETS, counts: [...of.counts] },
    sum: of.sum,
    count,
    min: of.min,
    max: of.max,
  };
}
