import { flushMetricsIfDue } from "./metrics";
import { flushTraces } from "./tracing";

/** The end of a Lambda invocation: pending spans exported, and the metrics written when due. */
export async function flushTelemetry(): Promise<void> {
  await Promise.all([flushTraces(), flushMetricsIfDue()]);
}
