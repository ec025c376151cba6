/** The runner as a process (the container's command; `npm run dev` starts it in-process instead). */
import { createStore, requireEnv } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { startRunner } from "./start";

const logger = createLogger();
const runner = await startRunner({
  store: createStore(),
  logger,
  token: requireEnv("RUNNER_TOKEN"),
  port: Number(process.env.PORT ?? 8788),
  host: process.env.HOST ?? "0.0.0.0",
  ...(process.env.RUNNER_CACHE_DIR ? { cacheDir: process.env.RUNNER_CACHE_DIR } : {}),
  ...(process.env.RUNNER_IDLE_SECONDS ? { idleMs: Number(process.env.RUNNER_IDLE_SECONDS) * 1_000 } : {}),
  ...(process.env.RUNNER_MAX_CHILDREN ? { maxChildren: Number(process.env.RUNNER_MAX_CHILDREN) } : {}),
});
logger.info("runner listening", { url: runner.url });

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void runner.stop().finally(() => process.exit(0));
  });
}
