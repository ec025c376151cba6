/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, `npm run dev` exports its metrics over OTLP/HTTP: a receiver
 * here (node:http on 127.0.0.1, tests/support/otlp-receiver.ts, reading the exporter's JSON payloads,
 * ExportMetricsServiceRequest) gets the call counter per {server, tool, outcome} and the duration
 * histograms with one count per call, under the resource's `service.name`; and the process serves no
 * `GET /metrics` then.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

/** The parts of OTLP's JSON encoding (ExportMetricsServiceRequest) read here. */
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string };
}
interface OtlpPoint {
  attributes?: OtlpAttribute[];
  asInt?: string | number;
  asDouble?: number;
  count?: string | number;
}
interface OtlpMetric {
  name: string;
  sum?: { dataPoints: OtlpPoint[]; isMonotonic?: boolean };
  histogram?: { dataPoints: OtlpPoint[] };
}
interface OtlpRequest {
  resourceMetrics: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeMetrics: Array<{ metrics: OtlpMetric[] }>;
  }>;
}

const label = (point: OtlpPoint, key: string) =>
  point.attributes?.find((attribute) => attribute.key === key)?.value.stringValue;

/** `name`'s points in the latest payload that has it (cumulative: the totals so far). */
function latest(payloads: OtlpRequest[], name: string): { metric: OtlpMetric; service?: string } | undefined {
  for (const payload of [...payloads].reverse()) {
    for (const resource of payload.resourceMetrics) {
      for (const scope of resource.scopeMetrics) {
        const metric = scope.metrics.find((candidate) => candidate.name === name);
        if (metric) {
          const service = resource.resource?.attributes?.find((a) => a.key === "service.name")?.value
            .stringValue;
          return { metric, ...(service ? { service } : {}) };
        }
      }
    }
  }
  return undefined;
}

describe("OTLP/HTTP metrics from npm run dev", () => {
  let dev: DevProcess;
  let upstream: Upstream;
  let receiver: OtlpReceiver;
  /** Each metrics payload received (JSON; the receiver refuses any other encoding). */
  const payloads: OtlpRequest[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver<OtlpRequest>("/v1/metrics", (payload) => payloads.push(payload));
    [dev, upstream] = await Promise.all([
      startDevProcess({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_METRIC_EXPORT_INTERVAL: "300",
      }),
      startUpstream({ jsonResponse: true }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await dev?.stop();
    await upstream?.close();
    await receiver?.close();
  });

  it("the receiver gets the call counter and one histogram count per call", async () => {
    const name = uniqueName("otlp");
    const created = await dev.call("POST", "/v1/servers", { name, url: upstream.url });
    expect(created.status).toBe(201);
    await waitFor(
      async () => (await dev.call("GET", `/v1/servers/${created.body.id}`)).body.status,
      (status) => status.state === "connected",
      { timeoutMs: 20_000 },
    );
    for (let i = 0; i < 3; i++) {
      const response = await dev.call("POST", `/v1/tools/${name}__echo/call`, { arguments: { text: "hi" } });
      expect(response.status).toBe(200);
    }
    expect((await dev.call("POST", `/v1/tools/${name}__fail/call`, { arguments: {} })).status).toBe(200);

    const counted = await waitFor(
      async () => {
        const found = latest(payloads, "mcpgw_tool_calls_total");
        const points = (found?.metric.sum?.dataPoints ?? []).filter(
          (point) => label(point, "server") === name,
        );
        return {
          service: found?.service,
          monotonic: found?.metric.sum?.isMonotonic,
          byOutcome: Object.fromEntries(
            points.map((point) => [
              `${label(point, "tool")}/${label(point, "outcome")}`,
              Number(point.asInt ?? point.asDouble),
            ]),
          ),
        };
      },
      (seen) => seen.byOutcome["echo/ok"] === 3 && seen.byOutcome["fail/tool_error"] === 1,
      { timeoutMs: 15_000 },
    );
    expect(counted).toEqual({
      service: "mcpgw-gateway",
      monotonic: true,
      byOutcome: { "echo/ok": 3, "fail/tool_error": 1 },
    });
    for (const histogram of [
      "mcpgw_tool_call_duration",
      "mcpgw_tool_call_upstream_duration",
      "mcpgw_tool_call_gateway_duration",
    ]) {
      const points = (latest(payloads, histogram)?.metric.histogram?.dataPoints ?? []).filter(
        (point) => label(point, "server") === name,
      );
      expect(
        Object.fromEntries(
          points.map((point) => [`${label(point, "tool")}/${label(point, "outcome")}`, Number(point.count)]),
        ),
        histogram,
      ).toEqual({ "echo/ok": 3, "fail/tool_error": 1 });
    }
    // Metrics go to the endpoint; the process serves no /metrics of its own then.
    expect((await fetch(`${dev.url}/metrics`)).status).toBe(404);
  }, 60_000);
});
