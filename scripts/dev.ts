/**
 * `npm run dev`: the whole system on one machine — the AWS emulator (unless AWS_ENDPOINT_URL names
 * one), resources created idempotently, the API on http://127.0.0.1:$PORT, the worker's queue
 * poller, the health sweep timer and the stdio runner (on its own loopback port). When the emulator
 * comes back empty (restarted, reset), the resources are re-created as soon as something finds one
 * missing (/readyz, the poller, a request), and the stack serves again without a restart.
 * The emulator it starts serves only requests signed with an access key made at start, which this
 * process alone holds (in memory, after it leaves process.env): stdio children cannot use it.
 * That emulator keeps its data (servers, secrets, keys, the KMS keys that seal them) in DEV_DATA_DIR
 * (default `.dev-data/`) across restarts; `npm run dev -- --ephemeral` starts one that keeps nothing.
 * `RUNNERS=3 npm run dev` starts a fleet of three stdio runners instead of the one in this process:
 * each its own node process, registered in the table, each instance at the runner holding its lease.
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { CallLatency, createApp, createAuditWriter, listen, loadConsoleAssets, OidcClient } from "@mcpgw/api";
import {
  ConfigError,
  createKmsTokenSigner,
  createStore,
  EnvReader,
  ensureResources,
  loadAppSettings,
  loadAwsConfig,
  loadRunnerSettings,
  recreateWhenMissing,
  removeCredentialsFromEnv,
} from "@mcpgw/aws";
import { createLogger, errorFields } from "@mcpgw/core";
import { type Runner, startRunner } from "@mcpgw/runner";
import { prometheusReader, startMetrics, startTracing } from "@mcpgw/telemetry";
import { RunnerDirectory, type RunnerRoute } from "@mcpgw/upstream";
import { startPoller, startSweeper, workerDepsFromEnv } from "@mcpgw/worker";
import { ensureConsoleBuilt } from "./lib/console";
import { startEmulator } from "./lib/emulator";
import { type FleetProcess, startFleet } from "./lib/runner-fleet";
import { assertAwsEndpointsAnswer, holdPort, portError, StartupError } from "./lib/startup-checks";

const log = (line: string) => process.stderr.write(`[dev] ${line}\n`);
// Local defaults, then the same settings reader the deployed system uses: a bad value stops here.
process.env.ALLOW_PRIVATE_UPSTREAMS ??= "true";
const generatedToken = !process.env.ADMIN_TOKEN;
process.env.ADMIN_TOKEN ||= randomBytes(24).toString("base64url");
process.env.RUNNER_TOKEN ||= randomBytes(24).toString("base64url");
const { port, dataDir, settings, runnerToken, runnerSettings, runners } = readSettings();
const ephemeral = process.argv.includes("--ephemeral");
const adminToken = process.env.ADMIN_TOKEN;
// Spans of the whole stack (API, worker, runner: one process), exported when OTEL_EXPORTER_OTLP_ENDPOINT is set.
const tracing = startTracing({ service: "gateway" });
// Its port first, held until the API listens there: in use, nothing else starts (no emulator, no
// runner and its start-up sweep). The runner and the emulator take free ports of their own.
const heldPort = await holdPort(port).catch(stopWith);

// A moto of this run's own requires an access key made now, held by this process alone (see below).
const emulator = await startEmulator(log, { dataDir: ephemeral ? undefined : dataDir });
// An emulator named by AWS_ENDPOINT_URL must answer before anything is made there.
await assertAwsEndpointsAnswer(loadAwsConfig(), emulator.owned ? [emulator.endpoint] : []).catch(stopWith);
const store = createStore(loadAwsConfig());
await ensureResources(store.clients, store.config);
const logger = createLogger({ level: settings.logLevel });
// One meter provider for the whole stack (gateway, admin, worker and runner run in this process):
// OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, else Prometheus text at GET /metrics on the API port.
const metrics = await startMetrics({ service: "gateway", local: prometheusReader });
const worker = workerDepsFromEnv({ store, logger });
// A fleet's runner processes get what they read (the emulator's endpoint, key and resource names, the
// runner token), taken before the credentials leave this process's environment; not the admin's secrets.
const { ADMIN_TOKEN: _admin, OIDC_CLIENT_SECRET: _oidc, ...fleetEnv } = process.env;
// Every setting is read: the tokens and AWS credentials leave the environment (the runner's children
// get an allow-listed env anyway; nothing read later may find them either).
removeCredentialsFromEnv();
const { runner, fleet, runnerEndpoint } = await startRunners();
// The gateway's call latencies go to the history once per 10 s slot; what is left goes out on stop.
const callLatency = new CallLatency(store, logger);
// Every tool call and admin change is an audit event, written in batches (AUDIT_SINK, AUDIT_RETENTION_DAYS).
const audit = createAuditWriter(store, logger, settings.audit);
const app = createApp({
  store,
  logger,
  adminToken,
  allowPrivateUpstreams: settings.allowPrivateUpstreams,
  pinningDefault: settings.pinningDefault,
  runner: runnerEndpoint,
  worktreeBase: settings.worktreeBase,
  mcp: { loopbackOnly: true, allowedOrigins: settings.mcpAllowedOrigins },
  maxUpstreamMessageBytes: settings.maxUpstreamMessageBytes,
  // The runner runs in this process: /readyz checks it too.
  readiness: { runner: true },
  console: loadConsoleAssets(await ensureConsoleBuilt(log)),
  gateway: { callLatency, searchModeThreshold: settings.searchModeThreshold },
  audit,
  auditRetentionDays: settings.audit.retentionDays,
  // Upstream OAuth's redirect URI is under the admin plane's URL (this process).
  publicAdminUrl: settings.publicAdminUrl ?? `http://127.0.0.1:${port}`,
  // The authorization server on this origin: sign-in at OIDC_ISSUER when set, else the development
  // sign-in page (see docs/security.md "Sign in with OAuth"); console admins may use the provider too.
  oauth: {
    issuer: settings.oauthIssuer ?? `http://127.0.0.1:${port}`,
    signer: createKmsTokenSigner(store.clients.kms, store.config.signingKeyId),
    devSignIn: true,
  },
  oidc: settings.oidc ? new OidcClient(settings.oidc) : undefined,
  consoleAdmins: settings.consoleAdmins,
  limits: settings.callerLimits,
  metricsText: metrics.text,
});
await heldPort.release();
const api = await listen(app, port).catch((error) => stopWith(portError(port, error)));
// From here, a stdio child's misbehaviour must not end the stack: a fault that escapes is logged, not
// fatal. (Until here no child runs, and a fault ends the start with its stack trace.)
process.on("uncaughtException", (error) => logger.error("uncaught exception", errorFields(error)));
process.on("unhandledRejection", (error) => logger.error("unhandled rejection", errorFields(error)));
const poller = startPoller({ ...worker, runner: runnerEndpoint });
const sweeper = startSweeper(worker, settings.sweepIntervalSeconds);
const stopRecreating = recreateWhenMissing(store, logger, { onRecreated: () => poller.wake() });

if (generatedToken) log(`ADMIN_TOKEN=${adminToken} (generated; set ADMIN_TOKEN to choose one)`);
log(
  `AWS endpoint ${emulator.endpoint}${
    emulator.owned
      ? " (moto, started for this run: it serves only requests signed with this run's key)"
      : " (not started here: unless it requires signed requests, stdio children can use it too)"
  }`,
);
if (emulator.owned) {
  log(
    ephemeral
      ? "throwaway run (--ephemeral): nothing is kept once it stops"
      : `data kept in ${dataDir} across restarts (npm run dev -- --ephemeral keeps nothing)`,
  );
}
console.log(`MCP Gateway ready at ${api.url} (docs: ${api.url}/docs)`);
log(`admin console at ${api.url}/`);
log(
  metrics.text
    ? `metrics (Prometheus text) at ${api.url}/metrics`
    : `metrics exported over ${metrics.export}`,
);
log(
  settings.oidc
    ? `sign-in at ${settings.oidc.issuer} (register ${settings.oauthIssuer ?? api.url}/oauth/oidc/callback, ${settings.publicAdminUrl ?? api.url}/console/oidc/callback and ${settings.publicAdminUrl ?? api.url}/oauth/upstream/signin there)`
    : "sign-in: the development page (set OIDC_ISSUER and OIDC_CLIENT_ID for an OpenID provider)",
);

/** A graceful stop's bound: past it, every child is SIGKILLed and the process exits anyway. */
const STOP_DEADLINE_MS = 10_000;
let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  setTimeout(() => {
    log(`stop took over ${STOP_DEADLINE_MS / 1_000} s: killing every child and exiting`);
    runner?.instances.killAll();
    for (const process of fleet) process.child.kill("SIGKILL");
    process.exit(1);
  }, STOP_DEADLINE_MS).unref();
  sweeper.stop();
  stopRecreating();
  // The runner stops alongside the API and the poller: a start under way is abandoned at once, so a
  // probe waiting on it ends now instead of holding the poller (and the runner) for its deadline.
  await Promise.all([
    api.close(),
    poller.stop(),
    runner?.stop(),
    ...fleet.map((process) => process.stop(STOP_DEADLINE_MS - 1_000)),
  ]);
  await callLatency.close();
  await audit?.close();
  await Promise.all([tracing.shutdown(), metrics.shutdown()]);
  await emulator.stop();
  log("stopped");
  process.exit(0);
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

/** Ends the start with a {@link StartupError}'s one line and exit code 1; anything else is thrown on. */
function stopWith(error: unknown): never {
  if (!(error instanceof StartupError)) throw error;
  log(error.message);
  process.exit(1);
}

/**
 * The stdio runner in this process, or (RUNNERS > 1) a fleet of runner processes registered in the
 * table, reached through its directory.
 */
async function startRunners(): Promise<{
  runner: Runner | undefined;
  fleet: FleetProcess[];
  runnerEndpoint: RunnerRoute;
}> {
  if (runners > 1) {
    const fleet = await startFleet(runners, {
      env: fleetEnv,
      onLine: (line) => process.stdout.write(`${line}\n`),
    });
    log(`${runners} stdio runners (processes ${fleet.map((process) => process.pid).join(", ")})`);
    return { runner: undefined, fleet, runnerEndpoint: new RunnerDirectory(store.fleet, runnerToken) };
  }
  const runner = await startRunner({
    store,
    logger,
    token: runnerToken,
    ...definedOnly({ ...runnerSettings, port: undefined, host: undefined, fleet: undefined }),
  });
  return { runner, fleet: [], runnerEndpoint: { url: runner.url, token: runner.token } };
}

/** The entries of `value` that are set. */
function definedOnly<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}

/** Every setting `npm run dev` uses, checked before anything starts; a bad value exits with its name. */
function readSettings() {
  try {
    const read = new EnvReader(process.env);
    const port = read.integer("PORT", 8787, { max: 65_535 });
    const dataDir = read.absolutePath("DEV_DATA_DIR") ?? resolve(import.meta.dirname, "../.dev-data");
    // How many stdio runners: one in this process, or a fleet of runner processes.
    const runners = read.integer("RUNNERS", 1, { min: 1, max: 16 });
    read.check();
    const { token: runnerToken = "", ...runnerSettings } = loadRunnerSettings();
    return { port, dataDir, settings: loadAppSettings(), runnerToken, runnerSettings, runners };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log(error.message);
    process.exit(2);
  }
}
