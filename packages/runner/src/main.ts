/** The runner as a process (the container's command; `npm run dev` starts it in-process instead). */
import {
  ConfigError,
  createStore,
  loadAwsConfig,
  loadRunnerSettings,
  removeCredentialsFromEnv,
} from "@mcpgw/aws";
import { createLogger, errorFields } from "@mcpgw/core";
import { prometheusReader, startMetrics, startTracing } from "@mcpgw/telemetry";
import { LEAVE_QUIET_MS, startRunner } from "./start";

const logger = createLogger();
/** How long ECS waits after SIGTERM before it SIGKILLs the task (Fargate's default stop timeout). */
const ECS_STOP_TIMEOUT_MS = 30_000;
const tracing = startTracing({ service: "runner" });
// Everything secret is read once, here; then it leaves the environment (children never see it anyway).
const { token, ...settings } = settingsOrExit(loadRunnerSettings);
const store = createStore(settingsOrExit(loadAwsConfig));
removeCredentialsFromEnv();
// OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set; else Prometheus text on the face (on loopback only).
const metrics = await startMetrics({ service: "runner", local: prometheusReader });
if (!token) throw new Error("Missing required environment variable RUNNER_TOKEN");
// One child's misbehaviour must never end the others: a fault that escapes is logged, not fatal.
process.on("uncaughtException", (error) => logger.error("uncaught exception", errorFields(error)));
process.on("unhandledRejection", (error) => logger.error("unhandled rejection", errorFields(error)));
const runner = await startRunner({
  store,
  logger,
  token,
  ...definedOnly(settings),
  ...(settings.fleet
    ? {
        fleet: {
          ...settings.fleet,
          advertiseUrl: await advertisedUrl(),
          memoryLimitBytes: await taskMemoryLimit(),
        },
      }
    : {}),
  ...(metrics.text ? { metricsText: metrics.text } : {}),
});
logger.info("runner listening", {
  url: runner.url,
  isolated: runner.isolated,
  ...(runner.membership ? { runner: runner.membership.id } : {}),
});

/**
 * A graceful stop's bound: a fleet runner's drain and the quiet of its connections, then 10 s to end
 * its children (the stop itself ends them within 8 s); past it, every child is killed and we exit —
 * before ECS's SIGKILL, 30 s after its SIGTERM.
 */
const STOP_DEADLINE_MS = Math.min(
  (settings.fleet ? settings.fleet.drainMs + LEAVE_QUIET_MS : 0) + 10_000,
  ECS_STOP_TIMEOUT_MS - 1_000,
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    setTimeout(() => {
      logger.error("stop past its deadline: killing every child", { deadlineMs: STOP_DEADLINE_MS });
      runner.instances.killAll();
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    void runner
      .stop()
      .then(() => Promise.all([tracing.shutdown(), metrics.shutdown()]))
      .finally(() => process.exit(0));
  });
}

/**
 * Where the rest of the fleet reaches this runner: RUNNER_ADVERTISE_URL, else — on ECS — the task's
 * private address (its container metadata, ECS_CONTAINER_METADATA_URI_V4) and PORT; else the address it
 * listens on.
 */
async function advertisedUrl(): Promise<string | undefined> {
  if (settings.fleet?.advertiseUrl) return settings.fleet.advertiseUrl;
  const metadata = process.env.ECS_CONTAINER_METADATA_URI_V4;
  if (!metadata) return undefined;
  const response = await fetch(metadata, { signal: AbortSignal.timeout(5_000) });
  const container = (await response.json()) as { Networks?: Array<{ IPv4Addresses?: string[] }> };
  const address = container.Networks?.[0]?.IPv4Addresses?.[0];
  if (!address) throw new Error("the task's container metadata names no IPv4 address");
  return `http://${address}:${settings.port}`;
}

/**
 * The task's memory limit on ECS (its task metadata's `Limits.Memory`, MiB): a Fargate container's own
 * cgroup has none when only the task sets one. Undefined elsewhere, or unread.
 */
async function taskMemoryLimit(): Promise<number | undefined> {
  const metadata = process.env.ECS_CONTAINER_METADATA_URI_V4;
  if (!metadata) return undefined;
  try {
    const response = await fetch(`${metadata}/task`, { signal: AbortSignal.timeout(5_000) });
    const task = (await response.json()) as { Limits?: { Memory?: number } };
    const mib = Number(task.Limits?.Memory);
    return mib > 0 ? mib * 1024 * 1024 : undefined;
  } catch (error) {
    logger.warn("could not read the task's memory limit", errorFields(error));
    return undefined;
  }
}

function definedOnly<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}

/** The settings, or — a value there but wrong — exit at once, naming the variable. */
function settingsOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    logger.error(error.message);
    process.exit(2);
  }
}
