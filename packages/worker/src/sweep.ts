import { randomUUID } from "node:crypto";
import { holdsAt, type Store, type SweepRun } from "@mcpgw/aws";
import {
  errorFields,
  type Job,
  type Logger,
  MAX_JOB_DELAY_SECONDS,
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
  /**
   * Why this run did nothing: the last one still holds (it works, or its jobs are not all due yet),
   * its jobs still wait in the queue (the workers are behind), or another scheduler began one.
   */
  skipped?: "running" | "backlog" | "raced";
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
  /** How long a run that never ends (its process died) holds, at most (default {@link RUN_HOLD_MS}). */
  runHoldMs?: number;
}

/** How long a run holds while it works: past the sweep function's timeout (30 s), whatever befalls it. */
export const RUN_HOLD_MS = 120_000;
/** The longest hold a run can ask for: while it works, or until its last job (≤ 15 min away) is due. */
const MAX_HOLD_MS = RUN_HOLD_MS + MAX_JOB_DELAY_SECONDS * 1_000;
/**
 * Jobs waiting in the queue (visible, not taken) past which the last run counts as not done: a tenth
 * of what it sent, and never fewer than this (retries and connects come and go meanwhile).
 */
const BACKLOG_MIN = 10;

/** The backlog past which the last run (having sent `jobs`) counts as still in progress. */
export function backlogLimit(jobs: number): number {
  return Math.max(BACKLOG_MIN, Math.ceil(jobs / 10));
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
 *
 * Runs never overlap, whoever schedules them: a run begins only once the last one's jobs are all due
 * and the queue holds no more than a tenth of them (see {@link SweepRuns}, {@link backlogLimit}); else
 * it does nothing (`skipped`). So a
 * sweep slower than its interval stretches the interval instead of piling work on the queue.
 */
export async function runSweep(
  deps: { store: Store; logger: Logger },
  options: SweepOptions = {},
): Promise<SweepResult> {
  const { store, logger } = deps;
  const now = options.now ?? Date.now();
  const spreadSeconds = options.spreadSeconds ?? DEFAULT_SWEEP_SPREAD_SECONDS;
  const result: SweepResult = {
    probes: 0,
    checks: 0,
    reconnects: 0,
    repaired: 0,
    placed: 0,
    reapedLeases: 0,
  };
  // The run's record is kept by the clock (`now` may judge ages at another time).
  const token = randomUUID();
  const startedAt = Date.now();
  const skipped = await begin(deps, {
    token,
    startedAt,
    holdsUntil: startedAt + (options.runHoldMs ?? RUN_HOLD_MS),
    jobs: 0,
  });
  if (skipped) return { ...result, skipped };
  const sending = { jobs: 0 };
  try {
    await sweep(deps, options, now, spreadSeconds, result, sending);
  } finally {
    // Held until its last job is due (delays count from the send); a run that sent nothing, or
    // failed before sending, holds no longer (the next one tries again).
    const lastDue = Date.now() + Math.min(spreadSeconds, MAX_JOB_DELAY_SECONDS) * 1_000;
    await store.sweeps
      .end(token, sending.jobs > 0 ? lastDue : Date.now(), sending.jobs)
      .then((ended) => {
        if (!ended) logger.warn("sweep outran its hold: another run began meanwhile", { token });
      })
      .catch((error) => logger.warn("sweep could not record its run's end", errorFields(error)));
  }
  return result;
}

/**
 * Begins run `run` unless the last one holds, its jobs still wait in the queue, or another scheduler
 * began one meanwhile: why not, or undefined when it began.
 */
async function begin(deps: { store: Store; logger: Logger }, run: SweepRun): Promise<SweepResult["skipped"]> {
  const { store, logger } = deps;
  const [last, backlog] = await Promise.all([store.sweeps.last(), readQueueDepth(deps)]);
  if (holdsAt(last, run.startedAt, MAX_HOLD_MS)) {
    logger.info("sweep skipped: the last run still holds", {
      holdsUntil: new Date(last?.holdsUntil ?? 0).toISOString(),
    });
    return "running";
  }
  if (last && backlog !== undefined && backlog > backlogLimit(last.jobs)) {
    logger.warn("sweep skipped: the last run's jobs still wait in the queue", { backlog, sent: last.jobs });
    return "backlog";
  }
  return (await store.sweeps.begin(run, last, MAX_HOLD_MS)) ? undefined : "raced";
}

/** One run's work (see {@link runSweep}); `sending` counts the jobs handed to the queue. */
async function sweep(
  deps: { store: Store; logger: Logger },
  options: SweepOptions,
  now: number,
  spreadSeconds: number,
  result: SweepResult,
  sending: { jobs: number },
): Promise<void> {
  const { store, logger } = deps;
  const [servers, reapedLeases] = await Promise.all([store.servers.listAll(), reapLeases(deps, now)]);
  result.reapedLeases = reapedLeases;
  const jobs: Job[] = [];
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
  sending.jobs = jobs.length;
  await store.jobs.sendMany(jobs, (job) =>
    job.type === "connect" ? 0 : sweepDelaySeconds(job.serverId, spreadSeconds),
  );
  logger.info("sweep enqueued probes", { servers: servers.length, ...result });
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
 * (no SQS call per export), and for {@link begin}. A failure is logged at debug and leaves the last value.
 */
async function readQueueDepth({
  store,
  logger,
}: {
  store: Store;
  logger: Logger;
}): Promise<number | undefined> {
  try {
    const depth = await store.jobs.depth();
    recordQueueDepth(depth);
    return depth;
  } catch (error) {
    logger.debug("queue depth not read", errorFields(error));
    return undefined;
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
