import { errorFields, type LogFields, type Logger } from "@mcpgw/core";
import type { AwsConfig } from "./config";

/** The AWS resources every part of the system depends on. */
export type Dependency = "table" | "queue" | "key";

/** Why a dependency cannot be used: it does not exist, or (a KMS key) it is disabled or pending deletion. */
export type Outage = "missing" | "unusable";

/** How often an ongoing outage is logged again, at most: once per dependency per interval. */
export const OUTAGE_LOG_INTERVAL_MS = 30_000;

/** The dependency and outage an AWS error reports (error names of DynamoDB, SQS and KMS). */
const OUTAGE_ERRORS = new Map<string, { dependency: Dependency; outage: Outage }>([
  ["ResourceNotFoundException", { dependency: "table", outage: "missing" }],
  ["QueueDoesNotExist", { dependency: "queue", outage: "missing" }],
  ["AWS.SimpleQueueService.NonExistentQueue", { dependency: "queue", outage: "missing" }],
  ["NotFoundException", { dependency: "key", outage: "missing" }],
  ["DisabledException", { dependency: "key", outage: "unusable" }],
  ["KMSInvalidStateException", { dependency: "key", outage: "unusable" }],
]);

/**
 * The missing (or unusable) resource an error is about, looking through `cause`s (a `QueueError` or
 * `SealError` wraps the SDK's error); undefined for any other error. Only errors AWS answered with
 * count (they carry the SDK's `$metadata`): another library's `NotFoundException` is not a missing key.
 */
export function outageOf(
  error: unknown,
): { dependency: Dependency; outage: Outage; error: Error } | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const answered = current as Error & { $metadata?: unknown; Code?: string };
    const found =
      answered.$metadata !== undefined
        ? (OUTAGE_ERRORS.get(answered.name) ?? OUTAGE_ERRORS.get(answered.Code ?? ""))
        : undefined;
    if (found) return { ...found, error: current };
    current = current.cause;
  }
  return undefined;
}

/**
 * One clear line per missing resource per interval, however many callers run into it (the poller's
 * loops, the sweep, every API request), a line when it answers again, and listeners told each time
 * (`npm run dev` re-creates its local resources). Loggers are passed per call, so a line carries the
 * fields (request id, source) of whoever saw the outage first.
 */
export interface OutageLog {
  /**
   * Records the outage `error` reports, logging it unless it was logged within the interval; returns
   * the dependency, or undefined when `error` is no outage (the caller logs it as it would).
   */
  report(logger: Logger, error: unknown, fields?: LogFields): Dependency | undefined;
  /** Records an outage seen without an error (a readiness check: a key pending deletion). */
  note(logger: Logger, dependency: Dependency, outage: Outage, fields?: LogFields): void;
  /** The dependency answered: logs that it is back when an outage was recorded, and forgets it. */
  recovered(logger: Logger, dependency: Dependency): void;
  /** Dependencies with an outage recorded and not yet recovered. */
  current(): Dependency[];
  /** Calls `listener` on every outage recorded (logged or not); returns the unsubscribe. */
  onOutage(listener: (dependency: Dependency, outage: Outage) => void): () => void;
}

/** An outage log for the resources `config` names, logging each at most once per `intervalMs`. */
export function createOutageLog(
  config: Pick<AwsConfig, "tableName" | "queueName" | "queueUrl" | "keyId">,
  intervalMs = OUTAGE_LOG_INTERVAL_MS,
): OutageLog {
  const names: Record<Dependency, string> = {
    table: `table ${config.tableName}`,
    // Deployed, the queue's real name is the last segment of its linked URL.
    queue: `job queue ${config.queueUrl?.split("/").pop() || config.queueName}`,
    key: `KMS key ${config.keyId}`,
  };
  const lastLogged = new Map<Dependency, number>();
  const listeners = new Set<(dependency: Dependency, outage: Outage) => void>();

  function note(logger: Logger, dependency: Dependency, outage: Outage, fields: LogFields = {}): void {
    const now = Date.now();
    const last = lastLogged.get(dependency);
    if (last === undefined || now - last >= intervalMs) {
      lastLogged.set(dependency, now);
      const what = outage === "missing" ? "does not exist" : "is disabled or pending deletion";
      logger.error(`${names[dependency]} ${what}; waiting for it`, { dependency, outage, ...fields });
    }
    for (const listener of listeners) listener(dependency, outage);
  }

  return {
    report(logger, error, fields = {}) {
      const found = outageOf(error);
      if (!found) return undefined;
      note(logger, found.dependency, found.outage, { ...fields, ...errorFields(found.error) });
      return found.dependency;
    },
    note,
    recovered(logger, dependency) {
      if (!lastLogged.delete(dependency)) return;
      logger.info(`${names[dependency]} is back`, { dependency });
    },
    current: () => [...lastLogged.keys()],
    onOutage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
