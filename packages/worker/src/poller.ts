import { errorFields } from "@mcpgw/core";
import { handleBatch } from "./handler";
import type { WorkerDeps } from "./process-job";

export interface PollerOptions {
  /** Receive loops running at once; each handles up to 10 jobs in parallel. */
  concurrency?: number;
  /** Long-poll wait per receive (1–20 s). */
  waitSeconds?: number;
  /** The pause after a failed receive; it doubles with each failure in a row, up to `maxPauseMs`. */
  pauseMs?: number;
  /** The longest pause between receives while they keep failing (a queue gone, the endpoint down). */
  maxPauseMs?: number;
}

/** A running local poller. */
export interface Poller {
  /** Ends a pause after failed receives now (e.g. the queue was just re-created). */
  wake(): void;
  stop(): Promise<void>;
}

/** Defaults of {@link PollerOptions}: 1 s after a failure, doubling up to 10 s. */
export const POLLER_PAUSE_MS = 1_000;
export const POLLER_MAX_PAUSE_MS = 10_000;

/**
 * The local stand-in for Lambda's SQS trigger: long-polls the job queue (`jobs.receive`) and feeds
 * batches to the same `handleBatch` the Lambda runs, acknowledging what succeeded (`jobs.ack`; failures
 * reappear after the visibility timeout, and go to the dead-letter queue after maxReceiveCount).
 *
 * A failed receive pauses every loop, for longer with each failure in a row (1 s doubling to 10 s), so
 * a missing queue or an endpoint that is down costs a few calls a pause, not a spin. A missing queue
 * is logged through the store's outage log (once per interval); another failure once per pause.
 */
export function startPoller(deps: WorkerDeps, options: PollerOptions = {}): Poller {
  const { outages, jobs } = deps.store;
  const logger = deps.logger.child({ source: "poller" });
  const controller = new AbortController();
  const waitSeconds = options.waitSeconds ?? 5;
  const pauseMs = options.pauseMs ?? POLLER_PAUSE_MS;
  const maxPauseMs = options.maxPauseMs ?? POLLER_MAX_PAUSE_MS;
  /** Failed receives in a row, and the pause every loop waits out before its next receive. */
  let failures = 0;
  let pause: { done: Promise<void>; end(): void } | undefined;

  function startPause(): void {
    failures++;
    const ms = Math.min(pauseMs * 2 ** (failures - 1), maxPauseMs);
    let end = () => {};
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      end = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const current = { done, end };
    pause = current;
    controller.signal.addEventListener("abort", end, { once: true });
    done.then(() => {
      controller.signal.removeEventListener("abort", end);
      if (pause === current) pause = undefined;
    });
  }

  function failed(error: unknown): void {
    // Loops that fail while a pause is on were in flight with the one that started it: no new pause.
    if (pause) return;
    // The queue forgets a URL of a queue gone by itself: a re-created one is looked up again.
    if (!outages.report(logger, error)) logger.error("poller receive failed", errorFields(error));
    startPause();
  }

  async function loop(): Promise<void> {
    while (!controller.signal.aborted) {
      if (pause) {
        await pause.done;
        continue;
      }
      try {
        const received = await jobs.receive({ max: 10, waitSeconds, signal: controller.signal });
        failures = 0;
        outages.recovered(logger, "queue");
        if (received.length === 0) continue;
        const records = received.map(({ messageId, body, sentAt }) => ({
          messageId,
          body,
          ...(sentAt === undefined ? {} : { attributes: { SentTimestamp: String(sentAt) } }),
        }));
        const { batchItemFailures } = await handleBatch(deps, records);
        const failedIds = new Set(batchItemFailures.map((f) => f.itemIdentifier));
        await jobs.ack(received.filter((job) => !failedIds.has(job.messageId)).map((job) => job.receipt));
      } catch (error) {
        if (controller.signal.aborted) return;
        failed(error);
      }
    }
  }

  const loops = Array.from({ length: options.concurrency ?? 4 }, () => loop());
  return {
    wake() {
      pause?.end();
    },
    async stop() {
      controller.abort();
      await Promise.allSettled(loops);
    },
  };
}
