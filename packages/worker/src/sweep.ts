import type { Store } from "@mcpgw/aws";
import { errorFields, type Job, type Logger, sweepAction } from "@mcpgw/core";

/** A server not attempted for this long has lost its retry chain; the sweep picks it up. */
export const STALE_ATTEMPT_MS = 60_000;
/** How long a new generation's connect job may take to start before the sweep deems it lost. */
export const LOST_JOB_GRACE_MS = 2_000;

/** What one sweep did. */
export interface SweepResult {
  probes: number;
  /** Connect jobs re-sent for generations whose job was lost. */
  reconnects: number;
  /** Statuses superseded because they disagreed with their config. */
  repaired: number;
  /** Statuses stored as before list pages, moved beside their configs. */
  placed: number;
}

/**
 * The health sweep: a probe job for every enabled server that is connected (to notice an upstream
 * that died) or whose attempts went stale; and the repair of what a lost write or job left behind —
 * a status that disagrees with its config (enabled vs disabled) is superseded to match, a generation
 * whose connect job never started gets it again, a status stored as before list pages is placed beside
 * its config. One index query (a page per 1 MB), whatever the count; jobs go out
 * in batches and the workers' bounded concurrency does the probing.
 */
export async function runSweep(
  deps: { store: Store; logger: Logger },
  now = Date.now(),
): Promise<SweepResult> {
  const { store, logger } = deps;
  const servers = await store.servers.listAll();
  const jobs: Job[] = [];
  const result: SweepResult = { probes: 0, reconnects: 0, repaired: 0, placed: 0 };
  for (const { server, status, statusApart } of servers) {
    if (statusApart) result.placed += Number(await placeStatus(deps, server.id, server.name));
    const action = sweepAction(server.enabled, status, server.updatedAt, now, {
      staleMs: STALE_ATTEMPT_MS,
      graceMs: LOST_JOB_GRACE_MS,
    });
    if (!action || !status) continue;
    if (action === "probe" || action === "connect") {
      jobs.push({
        type: action === "probe" ? "probe" : "connect",
        serverId: server.id,
        generation: status.generation,
      });
      result[action === "probe" ? "probes" : "reconnects"]++;
      continue;
    }
    // Fenced on the generation read: a change made meanwhile wins, and the next sweep looks again.
    try {
      const bumped = await store.statuses.bump(
        server.id,
        action === "enable" ? "connecting" : "disabled",
        status.generation,
      );
      if (!bumped) continue;
      result.repaired++;
      logger.warn("sweep repaired a status that disagreed with its config", {
        serverId: server.id,
        state: bumped.state,
      });
      if (action === "enable")
        jobs.push({ type: "connect", serverId: server.id, generation: bumped.generation });
    } catch (error) {
      logger.error("sweep could not repair a status", { serverId: server.id, ...errorFields(error) });
    }
  }
  await store.jobs.sendMany(jobs);
  logger.info("sweep enqueued probes", { servers: servers.length, ...result });
  return result;
}

/** Moves a status kept apart beside its config; a failure is logged, and the next sweep tries again. */
async function placeStatus(
  { store, logger }: { store: Store; logger: Logger },
  id: string,
  name: string,
): Promise<boolean> {
  try {
    return await store.servers.placeStatus(id, name);
  } catch (error) {
    logger.error("sweep could not place a status", { serverId: id, ...errorFields(error) });
    return false;
  }
}
