/** Lambda entries: the SQS job consumer (partial batch responses) and the scheduled health sweep. */

import { flushingLogs } from "@mcpgw/core";
import { flushTraces, startTracing } from "@mcpgw/telemetry";
import { workerDepsFromEnv } from "./deps";
import { handleBatch, type SqsRecord } from "./handler";
import { runSweep } from "./sweep";

startTracing({ service: "worker" });
const deps = workerDepsFromEnv();

export const handler = flushingLogs(
  (event: { Records: SqsRecord[] }) => handleBatch(deps, event.Records),
  flushTraces,
);

export const sweepHandler = flushingLogs(() => runSweep(deps), flushTraces);
