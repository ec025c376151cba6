import type { Store } from "@mcpgw/aws";
import { errorFields, type Logger } from "@mcpgw/core";
import { runSweep } from "./sweep";

/** The local stand-in for the scheduled sweep: runs it every `intervalSeconds`. */
export function startSweeper(
  deps: { store: Store; logger: Logger },
  intervalSeconds: number,
): { stop(): void } {
  const timer = setInterval(() => {
    runSweep(deps).catch((error) => deps.logger.error("sweep failed", errorFields(error)));
  }, intervalSeconds * 1_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
