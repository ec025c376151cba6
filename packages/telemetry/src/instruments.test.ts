import { metrics } from "@opentelemetry/api";
import { DataPointType, MeterProvider } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it } from "vitest";
import { LabelCap, OTHER, recordToolCall, registerInstruments } from "./instruments";
import { prometheusReader } from "./prometheus";

describe("LabelCap", () => {
  it("keeps the first tools of a server by name and counts later ones as other", () => {
    const cap = new LabelCap(10, 3);
    expect(["a", "b", "c", "d", "a"].map((tool) => cap.labels("files", tool).tool)).toEqual([
      "a",
      "b",
      "c",
      OTHER,
      "a",
    ]);
    // Each server has its own allowance.
    expect(cap.labels("git", "d")).toEqual({ server: "git", tool: "d" });
  });

  it("counts servers past its cap as other, with their tools", () => {
    const cap = new LabelCap(2, 5);
    cap.labels("one", "x");
    cap.labels("two");
    expect(cap.labels("three", "x")).toEqual({ server: OTHER, tool: OTHER });
    expect(cap.labels("three")).toEqual({ server: OTHER });
    expect(cap.labels("one", "y")).toEqual({ server: "one", tool: "y" });
  });
});

describe("recordToolCall", () => {
  afterEach(() => metrics.disable());

  it("counts a call by server, tool and outcome, with the gateway's part as the whole less the upstream's", async () => {
    const local = prometheusReader();
    const provider = new MeterProvider({ readers: [local.reader] });
    metrics.setGlobalMeterProvider(provider);
    registerInstruments();
    recordToolCall("files", "read", "ok", { totalMs: 30, upstreamMs: 25 });
    recordToolCall("files", "read", "ok", { totalMs: 10, upstreamMs: 12 });
    const { resourceMetrics } = await local.reader.collect();
    const byName = new Map(
      resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((m) => [m.descriptor.name, m]),
    );
    const calls = byName.get("mcpgw_tool_calls_total");
    expect(calls?.dataPoints.map((point) => [point.attributes, point.value])).toEqual([
      [{ server: "files", tool: "read", outcome: "ok" }, 2],
    ]);
    const gateway = byName.get("mcpgw_tool_call_gateway_duration");
    if (gateway?.dataPointType !== DataPointType.HISTOGRAM) throw new Error("no gateway histogram");
    // 30 − 25 = 5, and never below 0 (10 − 12 counts as 0).
    expect(gateway.dataPoints[0]?.value).toMatchObject({ count: 2, sum: 5, min: 0, max: 5 });
    expect(await local.text()).toContain('mcpgw_tool_calls_total{server="files",tool="read",outcome="ok"} 2');
    await provider.shutdown();
  });
});
