/**
 * Work a caller's answer need not wait for — a call's audit event built, its metrics recorded — run
 * together just after the current turn of the event loop (by then the answer is written), or at once
 * by {@link runAfterAnswer}: before a Lambda invocation ends, before an audit flush or a metrics read.
 */
import { createLogger } from "./log";
import { outsideTraces } from "./trace-context";

const logger = createLogger();
const queue: Array<() => void> = [];
let scheduled: NodeJS.Immediate | undefined;

/** Runs `work` after the answer under way is written (at the latest at the next {@link runAfterAnswer}). */
export function afterAnswer(work: () => void): void {
  queue.push(work);
  scheduled ??= setImmediate(runAfterAnswer);
}

/**
 * Runs every piece of work {@link afterAnswer} holds, now, in the order given. One that throws does not
 * stop the others (its error's class is logged): the work is bookkeeping, and never fails a call.
 */
export function runAfterAnswer(): void {
  if (scheduled) clearImmediate(scheduled);
  scheduled = undefined;
  const due = queue.splice(0);
  if (due.length === 0) return;
  // In no call's trace: the turn's first call scheduled it, and a flush may run it from anywhere.
  outsideTraces(() => {
    for (const work of due) {
      try {
        work();
      } catch (error) {
        logger.error("work after an answer failed", {
          error: error instanceof Error ? error.name : typeof error,
        });
      }
    }
  });
}
