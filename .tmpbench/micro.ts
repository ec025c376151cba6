import { beginSpan, currentTraceId, remoteContext, SpanKind, traceFields, withTraceMeta } from "@mcpgw/core";
import { recordToolCall, startMetrics, startTracing } from "@mcpgw/telemetry";

const mode = process.argv[2] ?? "on";
const env =
  mode === "on"
    ? { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_METRIC_EXPORT_INTERVAL: "600000" }
    : { OTEL_SDK_DISABLED: "true" };
startTracing({ service: "gateway", env });
await startMetrics({ service: "gateway", env });
const parts = process.argv[3] ?? "spans,inject,metrics,traceid";
async function one(i: number) {
  const request = beginSpan("POST", {
    kind: SpanKind.SERVER,
    parent: remoteContext({}),
    attributes: { "http.request.method": "POST" },
  });
  await request.run(async () => {
    const call = beginSpan("tools/call bench__echo", { attributes: { a: "x" } });
    await call.run(async () => {
      if (parts.includes("traceid")) currentTraceId();
      if (parts.includes("inject")) {
        traceFields();
        withTraceMeta({ name: "echo", arguments: { text: "hi" } });
      }
      await Promise.resolve();
    });
    call.end();
    if (parts.includes("metrics")) recordToolCall("bench", "echo", "ok", { totalMs: 1.2, upstreamMs: 0.8 });
  });
  request.end();
}
for (let i = 0; i < 20000; i++) await one(i);
const t = performance.now();
const N = 100000;
for (let i = 0; i < N; i++) await one(i);
console.log(mode, parts, (((performance.now() - t) / N) * 1000).toFixed(2), "µs/call");
process.exit(0);
