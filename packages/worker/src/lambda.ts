/** Lambda entries: the SQS job consumer (partial batch responses) and the scheduled health sweep. */

import { flushingLogs } from "@mcpgw/core";
import { flushTelemetry, startMetrics, startTracing } from "@mcpgw/telemetry";
import { workerDepsFromEnv } from "./deps";
import { handleBatch, type SqsRecord } from "./handler";
import { runSweep } from "./sweep";

startTracing({ service: "worker" });
const deps = workerDepsFromEnv();
await startMetrics({ service: "worker" });

export const handler = flushingLogs(
  (event: { Records: SqsRecord[] }) => handleBatch(deps, event.Records),
  flushTelemetry,
);

export const sweepHandler = flushingLogs(() => runSweep(deps), flushTelemetry);
