/**
 * The stdio runners: a fleet of Fargate tasks built from packages/runner/Dockerfile, in a private VPC —
 * never reached from the internet. Each task registers itself in the table (its private address, its
 * room) with a heartbeat, and serves the instances whose lease it holds; the functions look the owner
 * up there (RUNNER_FLEET). A task that dies has its instances started on the others once its
 * registration lapses (RUNNER_LEASE_SECONDS, 15 s); one stopped (a deploy, a scale-in) drains: it hands
 * its idle instances back and lets calls in flight end first. `sst dev` runs one local process instead
 * (`dev.command`), reached at its URL (the Runner link).
 *
 * The container starts as root only to run each child under a uid of its own (the image's ENTRYPOINT
 * keeps six capabilities and sets no_new_privs). The runner reads its token and its AWS credentials
 * (the ECS container-credentials path) once at start and removes them from its environment; children
 * get an allow-listed env, run under other uids, and so can read neither — they cannot reach the task
 * role's credentials.
 */
import { jobsLink } from "./queue";
import { isProduction, metricsNamespace, runnerScaling, stageSettings } from "./stages";
import { key, openStdioSecretsOnly, runnerToken, tableLink } from "./storage";

/** The runner's port (the Dockerfile's PORT / EXPOSE). */
const RUNNER_PORT = 8788;

/**
 * Functions that reach the runner live in this VPC; NAT gives them (and the runner) AWS and the
 * internet: managed NAT gateways in production, one small EC2 NAT instance per AZ elsewhere (cheaper,
 * but an instance to patch and a single point of failure).
 */
export const vpc = new sst.aws.Vpc("Vpc", {
  az: 2,
  nat: isProduction($app.stage) ? "managed" : "ec2",
});

export const cluster = new sst.aws.Cluster("Cluster", { vpc });

/** The token, as a SecureString the task reads at start (not in the task definition). */
const runnerTokenParameter = new aws.ssm.Parameter("RunnerTokenParameter", {
  name: `/${$app.name}/${$app.stage}/runner-token`,
  type: "SecureString",
  value: runnerToken.value,
});

const settings = stageSettings($app.stage);
const { worktreeBase } = settings;
const scaling = runnerScaling(settings);

/** Deployed, the runners are a fleet (the functions set this too); under `sst dev`, one local process. */
export const fleetEnvironment = (): Record<string, string> => ($dev ? {} : { RUNNER_FLEET: "true" });

export const runner = new sst.aws.Service("StdioRunner", {
  cluster,
  image: { context: ".", dockerfile: "packages/runner/Dockerfile" },
  cpu: "0.5 vCPU",
  memory: "1 GB",
  // A fleet: scaled out on CPU or memory (children are processes of the task) and on children per task
  // (below), in by draining tasks. A deploy rolls (ECS's 100 %/200 %): a new task registers before an
  // old one drains and stops.
  scaling: { min: scaling.min, max: scaling.max, cpuUtilization: 60, memoryUtilization: 70 },
  // ECS waits 30 s (Fargate's default stop timeout) after SIGTERM: the task drains (RUNNER_DRAIN_SECONDS,
  // 10 s), lets its callers close their connections (at most 5 s) and its children end within 8 s more.
  // Table to read server configs and record deaths; the job queue for retries. No Key link (its
  // Decrypt is unconditional): the runner may open only stdio env and secret-store values.
  link: [tableLink, jobsLink],
  permissions: openStdioSecretsOnly,
  environment: {
    KMS_KEY_ID: key.arn,
    PORT: String(RUNNER_PORT),
    HOST: $dev ? "127.0.0.1" : "0.0.0.0",
    ...($dev ? { RUNNER_TOKEN: runnerToken.value } : {}),
    // Registers in the table at its private address (from the task's metadata), with a heartbeat.
    ...fleetEnvironment(),
    METRICS_NAMESPACE: metricsNamespace($app.stage),
    // The same base as the API's (the stage's worktreeBase): unset, both default to /tmp/mcpgw-worktrees.
    ...(worktreeBase ? { WORKTREE_BASE: worktreeBase } : {}),
  },
  ssm: { RUNNER_TOKEN: runnerTokenParameter.arn },
  health: {
    command: [
      "CMD",
      "node",
      "-e",
      "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))",
    ],
    startPeriod: "10 seconds",
    interval: "15 seconds",
    timeout: "3 seconds",
    retries: 3,
  },
  serviceRegistry: { port: RUNNER_PORT },
  dev: { command: "npx tsx packages/runner/src/main.ts" },
});

/**
 * The third scaling signal: each task's children (`mcpgw_runner_task_children`, in its EMF lines), whose
 * average over the fleet is held near `childrenPerTask` — a task's own cap refuses more, and placement
 * then moves to a task with room, so the fleet grows before every task is full.
 */
if (!$dev) {
  const target = runner.nodes.autoScalingTarget;
  new aws.appautoscaling.Policy("StdioRunnerChildrenPolicy", {
    serviceNamespace: target.serviceNamespace,
    scalableDimension: target.scalableDimension,
    resourceId: target.resourceId,
    policyType: "TargetTrackingScaling",
    targetTrackingScalingPolicyConfiguration: {
      customizedMetricSpecification: {
        namespace: metricsNamespace($app.stage),
        metricName: "mcpgw_runner_task_children",
        dimensions: [{ name: "service", value: "runner" }],
        statistic: "Average",
      },
      targetValue: scaling.childrenPerTask,
    },
  });
}

/** `Resource.Runner.url`: the private URL (Cloud Map) deployed; the local process under `sst dev`. */
export const runnerLink = new sst.Linkable("Runner", {
  properties: {
    url: $dev ? `http://localhost:${RUNNER_PORT}` : $interpolate`http://${runner.service}:${RUNNER_PORT}`,
  },
});
