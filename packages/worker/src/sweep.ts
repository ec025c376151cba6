import type { Store } from "@mcpgw/aws";
import {
  errorFields,
  type Job,
  type Logger,
  type PlainServer,
  type StoredStatus,
  sweepAction,
  sweepDelaySeconds,
} from "@mcpgw/core";
import { recordQueueDepth } from "@mcpgw/telemetry";
import { attemptWindowMs } from "./attempt";

/**
 * A server not attempted for this long (a failed one: this long past its `nextAttemptAt`) has lost its
 * retry chain; the sweep picks it up.
 */
export const STALE_ATTEMPT_MS = 60_000;
/**
 * How long a new generation's connect job may take before the sweep deems it lost: at least one whole
 * attempt (deadline + grace + margin), so a slow first connect is never sent twice.
 */
export const LOST_JOB_GRACE_MS = attemptWindowMs();
/**
 * How long a sweep run every `intervalSeconds` spreads its probes and checks over: the first two
 * thirds of its interval, so the last of them still finish within it.
 */
export function sweepSpreadSeconds(intervalSeconds: number): number {
  return Math.floor((intervalSeconds * 2) / 3);
}

/** The spread unless told otherwise: that of the deployed schedule (every minute). */
export const DEFAULT_SWEEP_SPREAD_SECONDS = sweepSpreadSeconds(60);

/** What one sweep did. */
export interface SweepResult {
  /** Full probes enqueued: connected servers whose tools were listed too long ago, stale attempts. */
  probes: number;
  /** Liveness checks enqueued: connected servers whose tools were listed lately. */
  checks: number;
  /** Connect jobs re-sent for generations whose job was lost. */
  reconnects: number;
  /** Statuses superseded because they disagreed with their config. */
  repaired: number;
  /** Statuses stored as before list pages, moved beside their configs. */
  placed: number;
  /** Instance leases of stdio runners whose registration lapsed (a crash), deleted. */
  reapedLeases: number;
}

export interface SweepOptions {
  /** The time ages are judged by (default: now). */
  now?: number;
  /**
   * Probes and checks are delayed by a stable offset of their server within this many seconds (at most
   * 900), so the sweep's work spreads over its interval; 0 sends them all at once. Default 60.
   */
  spreadSeconds?: number;
  /** Connected servers whose tools were listed this long ago get a full probe (default 10 min). */
  maxListingAgeMs?: number;
}

/**
 * The health sweep: for every enabled server that is connected, a liveness check (a full probe once
 * its tools were listed `MAX_LISTING_AGE_MS` ago); a probe for one whose attempts went stale; and the
 * repair of what a lost write or job left behind — a status that disagrees with its config (enabled vs
 * disabled) is superseded to match, a generation whose connect job never started gets it again, a
 * status stored as before list pages is placed beside its config, a status missing or unreadable is
 * rewritten (a fresh generation) and connected again. One index query (a page per 1 MB),
 * whatever the count; probes and checks are spread over the interval; the workers do the probing. It
 * also deletes the leases of stdio runners that died (see {@link reapLeases}).
 */
export async function runSweep(
  deps: { store: Store; logger: Logger },
  options: SweepOptions = {},
): Promise<SweepResult> {
  const { store, logger } = deps;
  const now = options.now ?? Date.now();
  const spreadSeconds = options.spreadSeconds ?? DEFAULT_SWEEP_SPREAD_SECONDS;
  const [servers, reapedLeases] = await Promise.all([
    store.servers.listAll(),
    reapLeases(deps, now),
    readQueueDepth(deps),
  ]);
  const jobs: Job[] = [];
  const result: SweepResult = { probes: 0, checks: 0, reconnects: 0, repaired: 0, placed: 0, reapedLeases };
  for (const { server, status, statusApart } of servers) {
    if (statusApart) result.placed += Number(await placeStatus(deps, server.id, server.name));
    if (!status) {
      const healed = await healStatus(deps, server);
      if (healed) result.repaired++;
      if (healed && server.enabled)
        jobs.push({ type: "connect", serverId: server.id, generation: healed.generation });
      continue;
    }
    const action = sweepAction(server.enabled, status, server.updatedAt, now, {
      staleMs: STALE_ATTEMPT_MS,
      graceMs: LOST_JOB_GRACE_MS,
      ...(options.maxListingAgeMs === undefined ? {} : { maxListingAgeMs: options.maxListingAgeMs }),
    });
    if (!action || !status) continue;
    if (action === "probe" || action === "check" || action === "connect") {
      jobs.push({ type: action, serverId: server.id, generation: status.generation });
      result[action === "probe" ? "probes" : action === "check" ? "checks" : "reconnects"]++;
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
  // Repairs go at once; health work lands at each server's own point of the interval.
  await store.jobs.sendMany(jobs, (job) =>
    job.type === "connect" ? 0 : sweepDelaySeconds(job.serverId, spreadSeconds),
  );
  logger.info("sweep enqueued probes", { servers: servers.length, ...result });
  return result;
}

/**
 * Deletes the leases a crashed stdio runner left (its registration lapsed): a survivor takes each over
 * on next use anyway, but one whose instance is never used again would stay. A failure is logged and
 * leaves them to the next sweep.
 */
async function reapLeases({ store, logger }: { store: Store; logger: Logger }, now: number): Promise<number> {
  try {
    return await store.fleet.reap(now);
  } catch (error) {
    logger.warn("sweep could not reap lapsed runners' leases", errorFields(error));
    return 0;
  }
}

/**
 * Reads the queue's backlog for `mcpgw_queue_depth`: once per sweep, so the gauge reports a cached value
 * (no SQS call per export). A failure is logged at debug and leaves the last value.
 */
async function readQueueDepth({ store, logger }: { store: Store; logger: Logger }): Promise<void> {
  try {
    recordQueueDepth(await store.jobs.depth());
  } catch (error) {
    logger.debug("queue depth not read", errorFields(error));
  }
}

/**
 * Rewrites a status that is missing or unreadable (a fresh generation, `connecting` or `disabled`); a
 * failure is logged, and the next sweep tries again.
 */
async function healStatus(
  { store, logger }: { store: Store; logger: Logger },
  server: Pick<PlainServer, "id" | "name" | "enabled">,
): Promise<StoredStatus | undefined> {
  try {
    const healed = await store.statuses.heal(server.id, server.name, server.enabled);
    if (healed)
      logger.warn("sweep rewrote an unreadable status", { serverId: server.id, state: healed.state });
    return healed;
  } catch (error) {
    logger.error("sweep could not rewrite a status", { serverId: server.id, ...errorFields(error) });
    return undefined;
  }
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
