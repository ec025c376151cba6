import type { Store } from "@mcpgw/aws";
import { errorFields, type Logger } from "@mcpgw/core";
import { RUN_HOLD_MS, runSweep, sweepSpreadSeconds } from "./sweep";

/**
 * The local stand-in for the scheduled sweep: runs it every `intervalSeconds`, its probes and checks
 * spread over most of that interval (see `sweepSpreadSeconds`); runs never overlap (see `runSweep`). A missing table or
 * queue is logged through the store's outage log (once per its interval, however short this one is).
 */
export function startSweeper(
  deps: { store: Store; logger: Logger },
  intervalSeconds: number,
): { stop(): void } {
  const logger = deps.logger.child({ source: "sweep" });
  let runningSince: number | undefined;
  const timer = setInterval(() => {
    // A run still at work here is not started again (nor, through the table, anywhere else) — unless it
    // hangs past its hold: then the table's record decides.
    if (runningSince !== undefined && Date.now() - runningSince < RUN_HOLD_MS) return;
    runningSince = Date.now();
    runSweep({ store: deps.store, logger }, { spreadSeconds: sweepSpreadSeconds(intervalSeconds) })
      .then(
        () => deps.store.outages.recovered(logger, "table"),
        (error) => {
          if (!deps.store.outages.report(logger, error)) logger.error("sweep failed", errorFields(error));
        },
      )
      .finally(() => {
        runningSince = undefined;
      });
  }, intervalSeconds * 1_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
