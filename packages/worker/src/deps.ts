import { createStore, loadAppSettings, type Store } from "@mcpgw/aws";
import { createLogger, type Logger } from "@mcpgw/core";
import { createGuardedFetch, runnerRoute } from "@mcpgw/upstream";
import type { WorkerDeps } from "./process-job";

/** Worker dependencies from the one config module (RUNNER_URL/RUNNER_TOKEN, ALLOW_PRIVATE_UPSTREAMS…). */
export function workerDepsFromEnv(overrides: { store?: Store; logger?: Logger } = {}): WorkerDeps {
  const settings = loadAppSettings();
  const store = overrides.store ?? createStore();
  return {
    store,
    logger: overrides.logger ?? createLogger({ level: settings.logLevel }),
    fetch: createGuardedFetch({ allowPrivate: settings.allowPrivateUpstreams }),
    runner: runnerRoute(settings.runner, store.fleet),
    maxMessageBytes: settings.maxUpstreamMessageBytes,
    pinningDefault: settings.pinningDefault,
  };
}
