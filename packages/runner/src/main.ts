/** The runner as a process (the container's command; `npm run dev` starts it in-process instead). */
import { createStore, loadRunnerSettings } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { startRunner } from "./start";

const logger = createLogger();
const { token, ...settings } = loadRunnerSettings();
if (!token) throw new Error("Missing required environment variable RUNNER_TOKEN");
const runner = await startRunner({ store: createStore(), logger, token, ...definedOnly(settings) });
logger.info("runner listening", { url: runner.url });

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void runner.stop().finally(() => process.exit(0));
  });
}

function definedOnly<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}
