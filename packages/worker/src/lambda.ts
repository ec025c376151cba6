/** Lambda entries: the SQS job consumer (partial batch responses) and the scheduled health sweep. */

import { flushingLogs } from "@mcpgw/core";
import { flushingMetrics, startMetrics } from "@mcpgw/telemetry";
import { workerDepsFromEnv } from "./deps";
import { handleBatch, type SqsRecord } from "./handler";
import { runSweep } from "./sweep";

const deps = workerDepsFromEnv();
await startMetrics({ service: "worker" });

export const handler = flushingLogs(
  flushingMetrics((event: { Records: SqsRecord[] }) => handleBatch(deps, event.Records)),
);

export const sweepHandler = flushingLogs(flushingMetrics(() => runSweep(deps)));
