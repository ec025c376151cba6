import { metrics } from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { registerInstruments } from "./instruments";
import { prometheusReader } from "./prometheus";

/**
 * For tests: a meter provider with a Prometheus reader set as the global one, the instruments made on
 * it; `text()` is what it holds, `stop()` shuts it down and puts the API's no-op back.
 */
export function metricsForTest(): { text(): Promise<string>; stop(): Promise<void> } {
  const local = prometheusReader();
  const provider = new MeterProvider({ readers: [local.reader] });
  metrics.setGlobalMeterProvider(provider);
  registerInstruments();
  return {
    text: local.text,
    async stop() {
      await provider.shutdown();
      metrics.disable();
    },
  };
}
