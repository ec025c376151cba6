import type { Store } from "@mcpgw/aws";
import { type Job, type Logger, needsSweepProbe } from "@mcpgw/core";

/** A server not attempted for this long has lost its retry chain; the sweep picks it up. */
export const STALE_ATTEMPT_MS = 60_000;

/**
 * The health sweep: one probe job for every enabled server that is connected (to notice an upstream
 * that died) or whose attempts went stale. Two index queries, whatever the count; jobs go out in
 * batches and the workers' bounded concurrency does the probing.
 */
export async function runSweep(deps: { store: Store; logger: Logger }, now = Date.now()): Promise<number> {
  const [servers, statuses] = await Promise.all([deps.store.servers.listPlain(), deps.store.statuses.list()]);
  const jobs: Job[] = [];
  for (const server of servers) {
    const status = statuses.get(server.id);
    if (server.enabled && status && needsSweepProbe(status, server.updatedAt, now, STALE_ATTEMPT_MS)) {
      jobs.push({ type: "probe", serverId: server.id, generation: status.generation });
    }
  }
  await deps.store.jobs.sendMany(jobs);
  deps.logger.info("sweep enqueued probes", { servers: servers.length, probes: jobs.length });
  return jobs.length;
}
