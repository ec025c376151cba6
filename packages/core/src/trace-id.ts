import { INVALID_TRACEID, trace } from "@opentelemetry/api";

/**
 * The W3C trace id of the span active here (32 hex digits), recording or not; undefined where no
 * tracer provider runs or no span is active. The audit trail names each call's trace by it. Every span
 * here has a valid id or the invalid one (all zeros, a no-op span's): the SDK makes valid ones, and the
 * propagator continues only a valid `traceparent` — so the ids are not checked again, once a call.
 */
export function currentTraceId(): string | undefined {
  const traceId = trace.getActiveSpan()?.spanContext().traceId;
  return traceId === undefined || traceId === INVALID_TRACEID ? undefined : traceId;
}
