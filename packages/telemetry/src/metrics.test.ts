import { metrics } from "@opentelemetry/api";
import { afterEach, describe, expect, it, vi } from "vitest";
import { recordToolCall } from "./instruments";
import {
  createMetrics,
  DEFAULT_EXPORT_INTERVAL_MS,
  emfNamespace,
  exportIntervalMs,
  metricsExport,
  serviceName,
} from "./metrics";

afterEach(() => {
  metrics.disable();
  vi.restoreAllMocks();
});

describe("where metrics go", () => {
  it("OTLP when an endpoint is set, else EMF on Lambda, else the local reader", () => {
    expect(
      metricsExport({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", AWS_LAMBDA_FUNCTION_NAME: "f" }),
    ).toBe("otlp");
    expect(metricsExport({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://c:4318/v1/metrics" })).toBe("otlp");
    expect(metricsExport({ OTEL_EXPORTER_OTLP_ENDPOINT: " ", AWS_LAMBDA_FUNCTION_NAME: "f" })).toBe("emf");
    expect(metricsExport({ ECS_CONTAINER_METADATA_URI_V4: "http://169.254.170.2/v4/x" })).toBe("emf");
    expect(metricsExport({})).toBe("local");
    expect(metricsExport({ OTEL_SDK_DISABLED: "TRUE", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBe(
      "off",
    );
    expect(
      metricsExport({ OTEL_METRICS_EXPORTER: " None ", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
    ).toBe("off");
    expect(
      metricsExport({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }),
    ).toBe("otlp");
  });

  it("reads the export interval and the service name from the standard variables", () => {
    expect(exportIntervalMs({ OTEL_METRIC_EXPORT_INTERVAL: "5000" })).toBe(5_000);
    expect(exportIntervalMs({ OTEL_METRIC_EXPORT_INTERVAL: "soon" })).toBe(DEFAULT_EXPORT_INTERVAL_MS);
    expect(exportIntervalMs({ OTEL_METRIC_EXPORT_INTERVAL: "10" })).toBe(DEFAULT_EXPORT_INTERVAL_MS);
    expect(serviceName("worker", {})).toBe("mcpgw-worker");
    expect(serviceName("worker", { OTEL_SERVICE_NAME: "probes" })).toBe("probes");
  });

  it("writes EMF under METRICS_NAMESPACE (a stage's own), else MCPGateway; a name CloudWatch refuses is not used", () => {
    expect(emfNamespace({})).toBe("MCPGateway");
    expect(emfNamespace({ METRICS_NAMESPACE: "MCPGateway/prod" })).toBe("MCPGateway/prod");
    expect(emfNamespace({ METRICS_NAMESPACE: "AWS/ECS" })).toBe("MCPGateway");
    expect(emfNamespace({ METRICS_NAMESPACE: "bad\nname" })).toBe("MCPGateway");
    expect(emfNamespace({ METRICS_NAMESPACE: "x".repeat(256) })).toBe("MCPGateway");
  });
});

describe("on Lambda", () => {
  it("writes EMF lines at the end of every invocation, its calls in them", async () => {
    const writes: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const started = await createMetrics("gateway", {
      AWS_LAMBDA_FUNCTION_NAME: "mcp-gateway",
    });
    expect(started.export).toBe("emf");
    recordToolCall("files", "read", "ok", { totalMs: 4, upstreamMs: 3 });

    await started.flushIfDue();

    const documents = writes
      .join("")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(documents).toContainEqual(
      expect.objectContaining({
        service: "gateway",
        server: "files",
        tool: "read",
        mcpgw_tool_calls_total: 1,
      }),
    );
    await started.shutdown();
  });
});
