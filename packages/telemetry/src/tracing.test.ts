import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { beginSpan, currentTraceId, remoteContext, traceFields } from "@mcpgw/core";
import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { AlwaysOffSampler, AlwaysOnSampler, SamplingDecision } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  batchOptions,
  exporterNone,
  exportsTraces,
  RateCappedSampler,
  samplerFromEnv,
  sdkDisabled,
  startTracing,
  tracesUrl,
} from "./tracing";

const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("samplerFromEnv", () => {
  it.each([
    [
      {},
      "ParentBased{root=RateCapped{TraceIdRatioBased{0.05}, 10/s}, remoteParentSampled=TraceIdRatioBased{0.05}",
    ],
    [{ TRACE_RATE_LIMIT: "2.5" }, "ParentBased{root=RateCapped{TraceIdRatioBased{0.05}, 2.5/s}"],
    [{ TRACE_RATE_LIMIT: "0" }, "ParentBased{root=RateCapped{TraceIdRatioBased{0.05}, 0/s}"],
    [{ TRACE_RATE_LIMIT: "-1" }, "ParentBased{root=RateCapped{TraceIdRatioBased{0.05}, 10/s}"],
    [{ TRACE_RATE_LIMIT: "many" }, "ParentBased{root=RateCapped{TraceIdRatioBased{0.05}, 10/s}"],
    [{ OTEL_TRACES_SAMPLER: "parentbased_always_on" }, "ParentBased{root=AlwaysOnSampler"],
    [{ OTEL_TRACES_SAMPLER: "always_on" }, "AlwaysOnSampler"],
    [{ OTEL_TRACES_SAMPLER: "always_off" }, "AlwaysOffSampler"],
    [{ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" }, "TraceIdRatioBased{0.25}"],
    [{ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, "TraceIdRatioBased{1}"],
    [{ OTEL_TRACES_SAMPLER: "traceidratio" }, "TraceIdRatioBased{1}"],
    [{ OTEL_TRACES_SAMPLER: "parentbased_always_off" }, "ParentBased{root=AlwaysOffSampler"],
    [
      { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" },
      "ParentBased{root=TraceIdRatioBased{0.1}",
    ],
    [
      { OTEL_TRACES_SAMPLER: "nonsense" },
      "ParentBased{root=RateCapped{TraceIdRatioBased{0.05}, 10/s}, remoteParentSampled=TraceIdRatioBased{0.05}",
    ],
  ])("%j is %s", (env, described) => {
    expect(samplerFromEnv(env).toString()).toContain(described);
  });
});

describe("RateCappedSampler", () => {
  const decide = (sampler: RateCappedSampler) =>
    sampler.shouldSample(ROOT_CONTEXT, "0af7651916cd43dd8448eb211c80319c", "call", SpanKind.SERVER, {}, [])
      .decision;
  /** How many of `count` decisions made at once record. */
  const recorded = (sampler: RateCappedSampler, count: number) =>
    Array.from({ length: count }, () => decide(sampler)).filter(
      (decision) => decision === SamplingDecision.RECORD_AND_SAMPLED,
    ).length;

  it("records what its sampler records, at most a second's worth at once, then as time refills it", () => {
    let now = 0;
    const sampler = new RateCappedSampler(new AlwaysOnSampler(), 10, () => now);
    expect(recorded(sampler, 50)).toBe(10);
    now += 100; // a tenth of a second: one more
    expect(recorded(sampler, 50)).toBe(1);
    now += 60_000; // an idle minute refills the bucket, no more
    expect(recorded(sampler, 50)).toBe(10);
  });

  it("never records what its sampler does not; a cap of 0 records nothing, a cap below 1 one trace now and then", () => {
    let now = 0;
    expect(recorded(new RateCappedSampler(new AlwaysOffSampler(), 10, () => now), 5)).toBe(0);
    expect(recorded(new RateCappedSampler(new AlwaysOnSampler(), 0, () => now), 5)).toBe(0);
    const slow = new RateCappedSampler(new AlwaysOnSampler(), 0.5, () => now);
    expect(recorded(slow, 5)).toBe(1);
    now += 1_000;
    expect(recorded(slow, 5)).toBe(0);
    now += 1_000;
    expect(recorded(slow, 5)).toBe(1);
  });
});

describe("batchOptions", () => {
  it("reads the OTEL_BSP_* variables that are positive whole numbers", () => {
    expect(
      batchOptions({
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_BSP_MAX_QUEUE_SIZE: "-1",
        OTEL_BSP_EXPORT_TIMEOUT: "x",
      }),
    ).toEqual({ scheduledDelayMillis: 100 });
    expect(batchOptions({})).toEqual({});
  });
});

describe("exportsTraces", () => {
  it("exports when an OTLP endpoint for traces or for all signals is set", () => {
    expect(exportsTraces({})).toBe(false);
    expect(exportsTraces({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBe(false);
    expect(exportsTraces({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(exportsTraces({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/v1/traces" })).toBe(true);
  });
});

describe("remoteContext", () => {
  it("continues a valid traceparent and ignores a malformed one", () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    try {
      const valid = trace.getSpanContext(remoteContext({ traceparent: PARENT }));
      expect(valid).toMatchObject({ traceId: "0af7651916cd43dd8448eb211c80319c", isRemote: true });
      for (const traceparent of [
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "zz-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        `${PARENT}x`,
        "not a traceparent",
      ])
        expect(trace.getSpanContext(remoteContext({ traceparent }))).toBeUndefined();
    } finally {
      propagation.disable();
    }
  });
});

describe("tracesUrl", () => {
  it("takes the traces endpoint as given, else appends /v1/traces to the base one", () => {
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toBe("http://c:4318/v1/traces");
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/base" })).toBe(
      "http://c:4318/base/v1/traces",
    );
    expect(
      tracesUrl({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x",
      }),
    ).toBe("http://t/x");
    expect(tracesUrl({})).toBeUndefined();
  });
});

describe("OTEL_SDK_DISABLED", () => {
  it("registers nothing: spans are no-ops with no trace id", async () => {
    expect(sdkDisabled({ OTEL_SDK_DISABLED: " TRUE " })).toBe(true);
    expect(sdkDisabled({ OTEL_SDK_DISABLED: "false" })).toBe(false);
    expect(sdkDisabled({})).toBe(false);
    const tracing = startTracing({ service: "gateway", env: { OTEL_SDK_DISABLED: "true" } });
    const span = trace.getTracer("t").startSpan("s");
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe("00000000000000000000000000000000");
    span.end();
    await tracing.shutdown();
  });
});

describe("OTEL_TRACES_EXPORTER=none", () => {
  it("exports and records nothing, and still gives every call a trace id to pass on", async () => {
    expect(exporterNone(" NONE ")).toBe(true);
    expect(exporterNone("otlp")).toBe(false);
    expect(exporterNone(undefined)).toBe(false);
    const env = { OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" };
    expect(exportsTraces(env)).toBe(false);
    const tracing = startTracing({ service: "gateway", env: { ...env, OTEL_TRACES_SAMPLER: "always_on" } });
    const span = trace.getTracer("t").startSpan("s");
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    span.end();
    await tracing.shutdown();
  });
});

describe("a call's trace context", () => {
  it("is each context's own, however they alternate; none outside any span", async () => {
    const tracing = startTracing({ service: "gateway", env: {} });
    const one = trace.setSpan(ROOT_CONTEXT, trace.getTracer("t").startSpan("one"));
    const two = trace.setSpan(ROOT_CONTEXT, trace.getTracer("t").startSpan("two"));
    const idOf = (active: typeof one) => trace.getSpan(active)?.spanContext().traceId;
    expect(idOf(one)).not.toBe(idOf(two));
    for (const active of [one, one, two, one, ROOT_CONTEXT, two]) {
      const id = idOf(active);
      expect(traceFields(active).traceparent).toBe(
        id && `00-${id}-${trace.getSpan(active)?.spanContext().spanId}-00`,
      );
      expect(context.with(active, () => traceFields())).toEqual(traceFields(active));
      expect(context.with(active, currentTraceId)).toBe(id);
    }
    await tracing.shutdown();
  });
});

describe("with nothing to export", () => {
  it("records no span, even in a trace the caller sampled, and still names the caller's trace", async () => {
    const tracing = startTracing({
      service: "gateway",
      env: { OTEL_TRACES_SAMPLER: "parentbased_always_on" },
    });
    const span = trace.getTracer("t").startSpan("s", {}, remoteContext({ traceparent: PARENT }));
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    span.end();
    await tracing.shutdown();
  });
});

describe("beginSpan under a span that does not record", () => {
  // An endpoint is set so the sampler applies: a sink that takes what shutdown exports.
  const sink = createServer((request, response) => {
    request.resume();
    request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  beforeAll(() => new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise<void>((resolve) => sink.close(() => resolve())));
  const exporting = (sampler: string) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
    OTEL_TRACES_SAMPLER: sampler,
  });

  it("makes no new span: the unsampled local span stands for its children (same ids, no attributes)", async () => {
    const tracing = startTracing({ service: "gateway", env: exporting("parentbased_always_off") });
    const root = beginSpan("request", { attributes: { "http.route": "/mcp" } });
    expect(root.span.isRecording()).toBe(false);
    const child = root.run(() => beginSpan("tools/call", { attributes: { "mcp.tool": "echo" } }));
    expect(child.span).toBe(root.span);
    expect(root.run(() => child.run(() => trace.getActiveSpan()))).toBe(root.span);
    child.end({ outcome: "ok" });
    root.end();
    await tracing.shutdown();
  });

  it("still begins a span of its own under a remote parent, and under a recording one with its attributes", async () => {
    const tracing = startTracing({ service: "gateway", env: exporting("parentbased_always_on") });
    const unsampled = PARENT.replace(/-01$/, "-00");
    const remote = beginSpan("request", { parent: remoteContext({ traceparent: unsampled }) });
    expect(remote.span.isRecording()).toBe(false);
    expect(remote.span.spanContext().spanId).not.toBe("b7ad6b7169203331");
    expect(remote.span.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    remote.end();
    const root = beginSpan("request", { parent: remoteContext({ traceparent: PARENT }) });
    const child = root.run(() => beginSpan("tools/call", { attributes: { "mcp.tool": "echo" } }));
    expect(child.span.isRecording()).toBe(true);
    expect(child.span.spanContext().spanId).not.toBe(root.span.spanContext().spanId);
    expect((child.span as unknown as { attributes: Record<string, unknown> }).attributes).toEqual({
      "mcp.tool": "echo",
    });
    child.end();
    root.end();
    await tracing.shutdown();
  });

  it("begins a recorded span under a sampled one that has ended (no longer recording)", async () => {
    const tracing = startTracing({ service: "gateway", env: exporting("always_on") });
    const root = beginSpan("request");
    root.end();
    expect(root.span.isRecording()).toBe(false);
    const late = root.run(() => beginSpan("tools/call"));
    expect(late.span).not.toBe(root.span);
    expect(late.span.isRecording()).toBe(true);
    late.end();
    await tracing.shutdown();
  });
});
