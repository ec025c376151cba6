import { isSpanContextValid, trace } from "@opentelemetry/api";

/**
 * The W3C trace id of the span active here (32 hex digits), recording or not; undefined where no
 * tracer provider runs or no span is active. The audit trail names each call's trace by it.
 */
export function currentTraceId(): string | undefined {
  const context = trace.getActiveSpan()?.spanContext();
  return context && isSpanContextValid(context) ? context.traceId : undefined;
}
