/**
 * The worker: subscribed to the job queue with partial batch responses (only failed jobs are
 * redelivered), and the health sweep on a one-minute schedule. Both are packages/worker/src/lambda.ts.
 */

import { NODE_OPTIONS, nodejs } from "./bundling";
import { inspectJobQueue, jobQueue, jobsLink } from "./queue";
import { fleetEnvironment, runnerLink, vpc } from "./runner";
import { concurrencyOf, metricsNamespace, stageSettings } from "./stages";
import { keyLink, runnerToken, sealRefreshedTokens, tableLink } from "./storage";

/**
 * Connect / probe / retry jobs; in the VPC to reach the stdio runner privately. Opens configs; seals
 * only the upstream OAuth tokens it refreshes or fetches (`sealRefreshedTokens`).
 */
export const worker = jobQueue.subscribe(
  {
    handler: "packages/worker/src/lambda.handler",
    runtime: "nodejs22.x",
    nodejs,
    architecture: "arm64",
    memory: "512 MB",
    // A batch probes in parallel; one probe is bounded by 10 s + 5 s grace; under the 60 s visibility.
    timeout: "30 seconds",
    link: [tableLink, jobsLink, keyLink, runnerLink, runnerToken],
    permissions: [sealRefreshedTokens],
    vpc,
    ...concurrencyOf(stageSettings($app.stage), "worker"),
    environment: {
      NODE_OPTIONS,
      ALLOW_PRIVATE_UPSTREAMS: "false",
      METRICS_NAMESPACE: metricsNamespace($app.stage),
      ...fleetEnvironment(),
    },
  },
  { batch: { size: 10, partialResponses: true } },
);

/**
 * The health sweep reads the table and enqueues probes; it reaches no upstream: no VPC, no key. It reads
 * the queue's depth once per run (`mcpgw_queue_depth`).
 */
export const sweep = new sst.aws.Cron("HealthSweep", {
  schedule: "rate(1 minute)",
  function: {
    handler: "packages/worker/src/lambda.sweepHandler",
    runtime: "nodejs22.x",
    nodejs,
    architecture: "arm64",
    memory: "256 MB",
    timeout: "30 seconds",
    link: [tableLink, jobsLink],
    permissions: [inspectJobQueue],
    environment: { NODE_OPTIONS, METRICS_NAMESPACE: metricsNamespace($app.stage) },
  },
});
