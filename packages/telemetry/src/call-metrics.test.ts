import type { HrTime } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { type CallDurations, ToolCallMetrics } from "./call-metrics";

const CALLS: Array<[server: string, tool: string, outcome: string, durations: CallDurations]> = [
  ["files", "read", "ok", [12.5, 10, 2.5]],
  ["files", "read", "ok", [0, 0, 0]],
  ["files", "read", "tool_error", [4, 3.2, 0.8]],
  ["git", "log", "ok", [20_000, 19_990, 10]],
  ["files", "read", "ok", [5, 4, 1]],
  ["files", "write", "upstream.timeout", [750, 750, 0]],
];

/** Whether `a` is later than `b`. */
const after = (a: HrTime, b: HrTime) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/** Each metric's points as comparable values: name → attributes → value (sums, or a histogram's state). */
function pointsOf(metrics: MetricData[]) {
  return Object.fromEntries(
    metrics.map((metric) => [
      metric.descriptor.name,
      {
        unit: metric.descriptor.unit,
        type: metric.dataPointType,
        points: Object.fromEntries(
          (metric.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM ? [] : metric.dataPoints).map(
            (point) => [JSON.stringify(point.attributes), point.value],
          ),
        ),
      },
    ]),
  );
}

/** What the SDK's own counter and default histograms give for {@link CALLS}. */
async function throughTheSdk() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter("mcpgw");
  const calls = meter.createCounter("mcpgw_tool_calls_total");
  const histograms = [
    "mcpgw_tool_call_duration",
    "mcpgw_tool_call_upstream_duration",
    "mcpgw_tool_call_gateway_duration",
  ].map((name) => meter.createHistogram(name, { unit: "ms" }));
  for (const [server, tool, outcome, durations] of CALLS) {
    const labels = { server, tool, outcome };
    calls.add(1, labels);
    histograms.forEach((histogram, index) => {
      histogram.record(durations[index] ?? 0, labels);
    });
  }
  const { resourceMetrics } = await reader.collect();
  await provider.shutdown();
  return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
}

describe("ToolCallMetrics", () => {
  it("collects what the SDK's counter and default histograms would have", async () => {
    const producer = new ToolCallMetrics(AggregationTemporality.CUMULATIVE);
    for (const call of CALLS) producer.record(...call);
    const { resourceMetrics, errors } = await producer.collect();
    expect(errors).toEqual([]);
    const ours = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    expect(pointsOf(ours)).toEqual(pointsOf(await throughTheSdk()));
    expect(ours.map((metric) => metric.aggregationTemporality)).toEqual(
      Array(4).fill(AggregationTemporality.CUMULATIVE),
    );
  });

  it("cumulative: every series keeps counting across collections", async () => {
    const producer = new ToolCallMetrics(AggregationTemporality.CUMULATIVE);
    producer.record("files", "read", "ok", [1, 1, 0]);
    await producer.collect();
    producer.record("files", "read", "ok", [2, 1, 1]);
    const [calls] = (await producer.collect()).resourceMetrics.scopeMetrics[0]?.metrics ?? [];
    expect(calls?.dataPoints.map((point) => point.value)).toEqual([2]);
  });

  it("delta: each collection holds only the calls since the last one, from when that one ended", async () => {
    const producer = new ToolCallMetrics(AggregationTemporality.DELTA);
    producer.record("files", "read", "ok", [1, 1, 0]);
    producer.record("files", "read", "ok", [3, 1, 2]);
    const first = (await producer.collect()).resourceMetrics.scopeMetrics[0]?.metrics ?? [];
    expect(first[0]?.dataPoints.map((point) => point.value)).toEqual([2]);
    expect(first[0]?.aggregationTemporality).toBe(AggregationTemporality.DELTA);
    expect((await producer.collect()).resourceMetrics.scopeMetrics[0]?.metrics).toEqual([]);
    producer.record("git", "log", "ok", [8, 6, 2]);
    const third = (await producer.collect()).resourceMetrics.scopeMetrics[0]?.metrics ?? [];
    const [point] = third[1]?.dataPoints ?? [];
    expect(point?.attributes).toEqual({ server: "git", tool: "log", outcome: "ok" });
    expect(point?.value).toMatchObject({ count: 1, sum: 8, min: 8, max: 8 });
    // It starts where the (empty) second collection ended: after the first one's end.
    const [start, firstEnd] = [point?.startTime, first[0]?.dataPoints[0]?.endTime];
    expect(start && firstEnd && after(start, firstEnd)).toBe(true);
  });
});
