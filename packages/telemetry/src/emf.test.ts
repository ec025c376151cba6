import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { EMF_NAMESPACE, type EmfDocument, EmfExporter } from "./emf";

/** A provider whose reader exports to an EMF exporter writing into `lines` (flushed by hand). */
function emfProvider() {
  const lines: string[] = [];
  const exporter = new EmfExporter({
    service: "gateway",
    write: (text) => lines.push(...text.split("\n").filter(Boolean)),
  });
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const documents = async () => {
    await reader.forceFlush();
    return lines.splice(0).map((line) => JSON.parse(line) as EmfDocument);
  };
  return { meter: provider.getMeter("test"), documents, provider };
}

/**
 * The structure the EMF specification requires of a document: `_aws` with a millisecond Timestamp and
 * CloudWatchMetrics directives (Namespace; Dimensions, arrays of at most 30 names of root string
 * members; Metrics, names of root members holding a number, an array of numbers, or values/counts).
 */
function expectValidEmf(document: EmfDocument): void {
  expect(Number.isInteger(document._aws.Timestamp)).toBe(true);
  expect(document._aws.CloudWatchMetrics.length).toBeGreaterThan(0);
  for (const directive of document._aws.CloudWatchMetrics) {
    expect(directive.Namespace).toMatch(/^[^:].{0,255}$/);
    for (const set of directive.Dimensions) {
      expect(set.length).toBeLessThanOrEqual(30);
      for (const name of set) expect(typeof document[name]).toBe("string");
    }
    expect(directive.Metrics.length).toBeLessThanOrEqual(100);
    for (const metric of directive.Metrics) {
      expect(metric.Name.length).toBeLessThanOrEqual(1024);
      const value = document[metric.Name];
      if (typeof value === "number") continue;
      const distribution = value as { Values: number[]; Counts: number[]; Count: number; Sum: number };
      expect(distribution.Values.length).toBe(distribution.Counts.length);
      expect(distribution.Values.length).toBeLessThanOrEqual(100);
      expect(distribution.Counts.reduce((a, b) => a + b, 0)).toBe(distribution.Count);
    }
  }
}

describe("EmfExporter", () => {
  it("writes a counter's increase since the last export (delta), one document per attribute set", async () => {
    const { meter, documents, provider } = emfProvider();
    const calls = meter.createCounter("mcpgw_tool_calls_total");
    calls.add(2, { server: "files", tool: "read", outcome: "ok" });
    calls.add(1, { server: "files", tool: "read", outcome: "tool_error" });
    const first = await documents();
    expect(first).toHaveLength(2);
    for (const document of first) expectValidEmf(document);
    const ok = first.find((document) => document.outcome === "ok");
    expect(ok).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: EMF_NAMESPACE,
            Dimensions: [["service", "outcome", "server", "tool"]],
            Metrics: [{ Name: "mcpgw_tool_calls_total", Unit: "Count" }],
          },
        ],
      },
      service: "gateway",
      server: "files",
      tool: "read",
      mcpgw_tool_calls_total: 2,
    });
    calls.add(3, { server: "files", tool: "read", outcome: "ok" });
    const second = await documents();
    expect(second.map((document) => [document.outcome, document.mcpgw_tool_calls_total])).toEqual([
      ["ok", 3],
    ]);
    await provider.shutdown();
  });

  it("writes a histogram as values and counts (bucket midpoints within min and max) with its statistic set", async () => {
    const { meter, documents, provider } = emfProvider();
    const duration = meter.createHistogram("mcpgw_tool_call_duration", { unit: "ms" });
    for (const ms of [3, 4, 40, 40, 900])
      duration.record(ms, { server: "files", tool: "read", outcome: "ok" });
    const [document] = await documents();
    if (!document) throw new Error("no document");
    expectValidEmf(document);
    expect(document._aws.CloudWatchMetrics[0]?.Metrics).toEqual([
      { Name: "mcpgw_tool_call_duration", Unit: "Milliseconds" },
    ]);
    // Default buckets …5, 10, 25, 50, 75, 100, 250, 500, 750, 1000…: (0,5] (25,50] (750,1000].
    expect(document.mcpgw_tool_call_duration).toEqual({
      Values: [3, 37.5, 875],
      Counts: [2, 2, 1],
      Min: 3,
      Max: 900,
      Count: 5,
      Sum: 987,
    });
    await provider.shutdown();
  });

  it("puts the metrics of one attribute set in one document, and writes nothing when nothing was recorded", async () => {
    const { meter, documents, provider } = emfProvider();
    const labels = { server: "files", tool: "read", outcome: "ok" };
    meter.createCounter("mcpgw_tool_calls_total").add(1, labels);
    meter.createHistogram("mcpgw_tool_call_duration", { unit: "ms" }).record(12, labels);
    const [document, ...rest] = await documents();
    expect(rest).toEqual([]);
    expect(document?._aws.CloudWatchMetrics[0]?.Metrics.map((metric) => metric.Name).sort()).toEqual([
      "mcpgw_tool_call_duration",
      "mcpgw_tool_calls_total",
    ]);
    expect(await documents()).toEqual([]);
    await provider.shutdown();
  });
});
