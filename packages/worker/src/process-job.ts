import { recordFailure, type Store } from "@mcpgw/aws";
import { isOvertakenRetry, type Job, type Logger } from "@mcpgw/core";
import type { TargetSource } from "@mcpgw/upstream";
import { type AttemptDeps, attemptConnection } from "./attempt";

/** What the worker needs to run jobs. */
export interface WorkerDeps extends AttemptDeps {
  store: Store;
  logger: Logger;
  retryDelaySeconds?: number;
}

export type JobOutcome = "connected" | "failed" | "dropped";

/**
 * Runs one job: drops it when the server is gone, disabled or the job's generation is stale;
 * otherwise probes, writes the result under the generation fence, and schedules a retry on failure.
 * Idempotent under redelivery: `jobId` (the SQS message id) records each outcome once.
 */
export async function processJob(deps: WorkerDeps, job: Job, jobId?: string): Promise<JobOutcome> {
  const { store } = deps;
  const logger = deps.logger.child({ serverId: job.serverId, job: job.type, generation: job.generation });
  const status = await store.statuses.get(job.serverId);
  if (!status || status.generation !== job.generation) {
    logger.debug("job dropped", { why: status ? "stale generation" : "server deleted" });
    return "dropped";
  }
  if (isOvertakenRetry(job, status.lastConnectionAttemptAt)) {
    logger.debug("job dropped", { why: "a later attempt owns the retry chain" });
    return "dropped";
  }
  // Only an HTTP server's headers are needed (a KMS call); a stdio server is reached by id through the runner.
  const plain = await store.servers.getPlain(job.serverId);
  const server: (TargetSource & { name: string; enabled: boolean }) | undefined =
    plain?.transport === "http"
      ? await store.servers.get(job.serverId)
      : plain && { transport: "stdio", id: plain.id, name: plain.name, enabled: plain.enabled };
  if (!server?.enabled) {
    logger.debug("job dropped", { why: server ? "disabled" : "server deleted" });
    return "dropped";
  }
  const { tools, ...outcome } = await attemptConnection(server, deps);
  if (!outcome.ok) {
    const written = await recordFailure(store, server.id, job.generation, outcome, {
      ...(jobId ? { jobId } : {}),
      ...(deps.retryDelaySeconds === undefined ? {} : { retryDelaySeconds: deps.retryDelaySeconds }),
    });
    if (!written) {
      logger.info("attempt result dropped", { why: "superseded or already recorded" });
      return "dropped";
    }
    logger.warn("server failed", { server: server.name, reason: outcome.reason });
    return "failed";
  }
  const written = await store.statuses.recordAttempt(
    server.id,
    job.generation,
    outcome,
    tools,
    jobId ? { jobId } : {},
  );
  if (!written) {
    logger.info("attempt result dropped", { why: "superseded or already recorded" });
    return "dropped";
  }
  logger.info("server connected", {
    server: server.name,
    latencyMs: outcome.latencyMs,
    toolCount: outcome.toolCount,
  });
  return "connected";
}
