import { createStore, loadAppSettings, type Store } from "@mcpgw/aws";
import { createLogger, type Logger } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import type { WorkerDeps } from "./process-job";

/** Worker dependencies from the environment (RUNNER_URL/RUNNER_TOKEN, ALLOW_PRIVATE_UPSTREAMS). */
export function workerDepsFromEnv(
  overrides: { store?: Store; logger?: Logger } = {},
  env: Record<string, string | undefined> = process.env,
): WorkerDeps {
  const settings = loadAppSettings(env);
  const allowPrivate = settings.allowPrivateUpstreams;
  return {
    store: overrides.store ?? createStore(),
    logger: overrides.logger ?? createLogger(),
    fetch: createGuardedFetch({ allowPrivate }),
    runner: settings.runner,
  };
}
