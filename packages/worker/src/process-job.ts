import { setTimeout as delay } from "node:timers/promises";
import {
  CatalogMovedError,
  CatalogTooLargeError,
  type Failure,
  type RecordOptions,
  recordFailure,
  SealError,
  type Store,
  type StoredServer,
} from "@mcpgw/aws";
import {
  assertNever,
  effectivePinning,
  errorFields,
  isOvertakenRetry,
  isSpentConnect,
  type Job,
  type Logger,
  type Pinning,
  type PlainServer,
  profileDigest,
  reconcileTools,
  type ServerProfile,
  screenToolChange,
  type ToolInfo,
  toServerProfile,
} from "@mcpgw/core";
import { recordProbe } from "@mcpgw/telemetry";
import {
  createRunnerClient,
  type ProbeResult,
  probeFailure,
  probeServer,
  type RunnerRoute,
  runnerLoss,
  type TargetSource,
  unreadableVerdict,
} from "@mcpgw/upstream";
import { type AttemptDeps, attemptTarget, attemptWindowMs } from "./attempt";
import { probePoint, recordProbePoint } from "./probe-point";

/** What the worker needs to run jobs. */
export interface WorkerDeps extends AttemptDeps {
  store: Store;
  logger: Logger;
  /** Where stdio servers are reached (their runner); none → a stdio server's probe fails. */
  runner?: RunnerRoute | undefined;
  /** The first retry's delay (default 15 s); repeated failures back off from it. */
  retryDelaySeconds?: number;
  /** The longest retry delay, and a deterministic failure's (default 5 min). */
  maxRetryDelaySeconds?: number;
  /** How long a connected server's failed check waits before the one re-check that confirms it (default 2 s). */
  recheckDelayMs?: number;
  /** The pinning of servers that set none (PINNING_DEFAULT; default `approve`). */
  pinningDefault?: Pinning | undefined;
}

/**
 * How often a probe's result is decided again when its catalogue was rewritten meanwhile (each time on
 * a fresh read); past that the result is dropped (the sweep lists the server again), never a failure.
 */
export const PIN_ATTEMPTS = 8;

/** The pause before a connected server's failed liveness check is checked again (see {@link needsRecheck}). */
export const RECHECK_DELAY_MS = 2_000;

/**
 * Whether a connected server's failed liveness check is checked once more before its status flips: a
 * quick failure (refused, an HTTP error, a refusal of access) may be a blip, and the re-check 2 s later
 * keeps a real outage visible within a few seconds; a `not_responding` one already waited the whole
 * deadline (a second would double the time a hang stays hidden), and a deterministic one would only
 * say the same again.
 */
export function needsRecheck(result: ProbeResult): boolean {
  return !result.ok && result.reason !== "not_responding" && !result.deterministic;
}

/** `alive`: a check found the server answering as before, and wrote nothing. */
export type JobOutcome = "connected" | "alive" | "failed" | "dropped";

/**
 * Runs one job: drops it when the server is gone, disabled or the job's generation is stale;
 * otherwise probes, writes the result under the generation fence — on success with what the probe found
 * (tools and the server's profile, bounded again here: it is the upstream's word) — and schedules a
 * retry on failure.
 * A `check` of a server still `connected` is a liveness check: its tools are listed (and the result
 * written) only when the profile it reports differs from the one of the last listing; a check that
 * finds the server as it was writes no status. Any other job, or a check of a server no longer connected,
 * is a full probe.
 * Idempotent under redelivery: `jobId` (the SQS message id) records each outcome once.
 * Every attempt also leaves a point in the server's latency history (a write of its own).
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
  if (isSpentConnect(job, status)) {
    logger.debug("job dropped", { why: "this generation's connect was attempted already" });
    return "dropped";
  }
  const stored = await store.servers.read(job.serverId);
  const plain = stored?.plain;
  if (!stored || !plain?.enabled) {
    logger.debug("job dropped", { why: plain ? "disabled" : "server deleted" });
    return "dropped";
  }
  // One attempt in flight per generation of a server not connected (a connected one's checks write
  // nothing, and claim nothing): a duplicate job — a connect re-sent, a redelivery — is dropped.
  const claimed = status.state !== "connected";
  if (
    claimed &&
    !(await store.statuses.claimAttempt(
      job.serverId,
      job.generation,
      new Date(Date.now() + attemptWindowMs(deps)).toISOString(),
    ))
  ) {
    logger.info("job dropped", { why: "an attempt of this generation is under way" });
    return "dropped";
  }
  const target = await targetSource(stored);
  const listed = status.profileDigest;
  const listToolsIf =
    job.type === "check" && status.state === "connected"
      ? (reported: ServerProfile | undefined) =>
          profileDigest(reported && toServerProfile(reported)) !== listed
      : undefined;
  // A check whose 2025 attempt got no answer keeps the 2025 surface it listed last (read only then).
  const previousLegacy = async () => (await store.statuses.getCatalog(job.serverId))?.profile?.legacy;
  const probe = () =>
    target
      ? probeServer(
          {
            ...deps,
            credentials: store.upstreamCredentials,
            attempt: (ready, only) => attemptTarget(ready, { ...deps, previousLegacy }, only),
          },
          { ...target, name: plain.name },
          listToolsIf,
        )
      : Promise.resolve({
          ...probeFailure(new Date().toISOString(), unreadableVerdict()),
          deterministic: true,
        });
  let started = performance.now();
  let result: ProbeResult = await probe();
  if (listToolsIf && needsRecheck(result)) {
    // A connected server refused one check: a blip (a restart, one lost connection) is not an outage.
    logger.info("check failed; checking again before the server is marked failed", {
      reason: result.ok ? undefined : result.reason,
    });
    await delay(deps.recheckDelayMs ?? RECHECK_DELAY_MS);
    started = performance.now();
    result = await probe();
  }
  const elapsedMs = performance.now() - started;
  const point = probePoint(result, elapsedMs);
  recordProbe(plain.name, result.ok ? "ok" : result.reason, elapsedMs);
  // The status write goes first; the attempt's point goes to the latency history alongside it (never
  // failing the job), and the job ends once both are done. No attempt (secrets unreadable), no point.
  // An older generation served while this one connected: the settling record ends that.
  const handedOver = status.servingGeneration !== undefined;
  const outcome = recordResult(deps, logger, job, plain, result, {
    jobId,
    endsClaim: claimed,
    endsServing: handedOver,
  });
  const history = target ? recordProbePoint({ store, logger }, plain.id, point) : undefined;
  const written = (await Promise.all([outcome, history]))[0];
  // The generation settled: the older one's children serve no more.
  if ((written === "connected" || written === "failed") && handedOver)
    await retireServing(deps, logger, plain, job.generation);
  return written;
}

/**
 * Retires a stdio server's children of generations below `generation` (the one now settled): they take
 * no new calls and stop once the calls on them have ended.
 */
async function retireServing(
  deps: WorkerDeps,
  logger: Logger,
  plain: PlainServer,
  generation: number,
): Promise<void> {
  if (plain.transport !== "stdio" || !deps.runner) return;
  try {
    const stopped = await createRunnerClient(deps.runner).stopServer(plain.id, generation, { drain: true });
    if (stopped > 0) logger.info("older generation's children retired", { stopped });
  } catch (error) {
    logger.warn("could not stop the older generation's children", errorFields(error));
  }
}

/** Writes an attempt's result under the generation fence (see {@link processJob}). */
async function recordResult(
  deps: WorkerDeps,
  logger: Logger,
  job: Job,
  plain: PlainServer,
  result: ProbeResult,
  { jobId, endsClaim, endsServing }: { jobId: string | undefined; endsClaim: boolean; endsServing: boolean },
): Promise<JobOutcome> {
  const { store } = deps;
  const recordOptions = { ...(jobId ? { jobId } : {}), ...(endsClaim ? { endsClaim } : {}) };
  const failOptions = {
    ...recordOptions,
    ...(deps.retryDelaySeconds === undefined ? {} : { retryDelaySeconds: deps.retryDelaySeconds }),
    ...(deps.maxRetryDelaySeconds === undefined ? {} : { maxRetryDelaySeconds: deps.maxRetryDelaySeconds }),
  };
  const recordFailed = async (failed: Failure & { placement?: "moved" | "down" }) => {
    // A stdio server whose runner of the fleet was lost: said so, and retried once it has lapsed.
    // Only a runner that refused (421, or the connection) is lost: a timeout or any other failure is the server's.
    const lost = failed.placement
      ? await runnerLoss(deps.runner, plain.transport, { ...failed, retryable: true, scope: "server" })
      : undefined;
    const failure = lost ? { ...failed, error: lost.verdict.error, moving: true } : failed;
    const options = lost ? { ...failOptions, ...lost.retry } : failOptions;
    const written = await recordFailure(store, plain.id, job.generation, failure, options);
    if (!written) {
      logger.info("attempt result dropped", { why: "superseded or already recorded" });
      return "dropped" as const;
    }
    logger.warn(lost ? "server's runner lost: it moves" : "server failed", {
      server: plain.name,
      reason: failure.reason,
    });
    return "failed" as const;
  };
  if (!result.ok) return recordFailed(result);
  if ("alive" in result) {
    logger.debug("server alive", { server: plain.name, latencyMs: result.latencyMs });
    return "alive";
  }
  const profile = result.profile && toServerProfile(result.profile);
  const options = { ...recordOptions, ...(endsServing ? { endsServing } : {}) };
  let written: boolean;
  try {
    written = result.tools
      ? await recordPinned(
          deps,
          logger,
          plain,
          job.generation,
          { ...result, tools: result.tools },
          profile,
          options,
        )
      : await store.statuses.recordAttempt(plain.id, job.generation, result, undefined, options);
  } catch (error) {
    // A result that cannot be stored settles as a failure that says why — never `connecting` forever.
    // A catalogue too large stays too large until the server changes: its retry waits the cap.
    if (error instanceof CatalogTooLargeError)
      return recordFailed({ at: result.at, reason: "failed", error: error.message, deterministic: true });
    const why = `the probe's result could not be stored (${errorName(error)})`;
    return recordFailed({ at: result.at, reason: "failed", error: why });
  }
  if (!written) {
    logger.info("attempt result dropped", { why: "superseded or already recorded" });
    return "dropped";
  }
  logger.info("server connected", {
    server: plain.name,
    latencyMs: result.latencyMs,
    toolCount: result.toolCount,
    ...(profile ? { protocolVersion: profile.protocolVersion } : {}),
  });
  return "connected";
}

/**
 * Writes a listing's outcome with the catalogue its server's pinning makes of it (see `reconcileTools`):
 * decided on the stored catalogue, and written only over that one — a catalogue rewritten meanwhile (an
 * admin's decision, another probe) is read and decided again. `auto` logs each tool whose definition
 * changed (its name only, never its text).
 */
async function recordPinned(
  deps: WorkerDeps,
  logger: Logger,
  plain: PlainServer,
  generation: number,
  result: Extract<ProbeResult, { ok: true }> & { tools: ToolInfo[] },
  profile: ServerProfile | undefined,
  options: RecordOptions,
): Promise<boolean> {
  const mode = effectivePinning(plain, deps.pinningDefault ?? "approve");
  for (let attempt = 1; ; attempt++) {
    const stored = await deps.store.statuses.getCatalog(plain.id);
    // A damaged catalogue lost its pins: it heals at once from what the upstream lists now (as a first
    // connection does), said in a warning. Failing closed would buy nothing against whoever can write the
    // table (they could write any catalogue whole) and would take every tool of the server away from
    // its callers until an admin approved each again.
    if (stored?.damaged && mode === "approve")
      logger.warn("catalogue damaged; its pins are lost and taken again from the current listing", {
        serverId: plain.id,
      });
    const previous = stored?.damaged ? undefined : stored;
    const { changed, dropped, ...pinned } = reconcileTools(
      previous,
      result.tools,
      mode,
      result.at,
      screenToolChange,
    );
    if (dropped.length > 0)
      logger.warn("tool changes left out: past the pending changes' bounds", { serverId: plain.id, dropped });
    try {
      const written = await deps.store.statuses.recordAttempt(
        plain.id,
        generation,
        { ...result, toolCount: pinned.tools.length },
        { ...pinned, ...(profile ? { profile } : {}) },
        { ...options, catalogHash: stored?.hash ?? null },
      );
      if (written && mode === "auto")
        for (const tool of changed) logger.info("tool definition changed", { serverId: plain.id, tool });
      return written;
    } catch (error) {
      if (!(error instanceof CatalogMovedError)) throw error;
      if (attempt >= PIN_ATTEMPTS) {
        logger.warn("attempt result dropped: the catalogue kept changing meanwhile", { attempts: attempt });
        return false;
      }
    }
  }
}

/**
 * What the probe needs: an HTTP server's URL, opened headers and `auth` (one read, a KMS call per sealed
 * value), or just a stdio server's id (the runner opens its env). Undefined when the sealed values
 * cannot be opened.
 */
async function targetSource({ plain, open }: StoredServer): Promise<TargetSource | undefined> {
  if (!plain.sealIntact) return undefined;
  switch (plain.transport) {
    case "stdio":
      return { transport: "stdio", id: plain.id };
    case "http":
      try {
        const record = await open();
        return record?.transport === "http"
          ? { transport: "http", id: record.id, url: record.url, headers: record.headers, auth: record.auth }
          : undefined;
      } catch (error) {
        if (error instanceof SealError) return undefined;
        throw error;
      }
    default:
      return assertNever(plain);
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}
