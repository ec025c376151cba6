/**
 * What sst.config.ts builds, checked without AWS: `run()` evaluated against recording stand-ins of
 * SST's globals (`sst`, `aws`, `$app`, …), then the recorded arguments compared with the code they
 * deploy — the table with bootstrap.ts, handler paths with real exports, link names with the config
 * module and sst-env.d.ts, and each function's grants with the AWS calls the code makes (least privilege).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { MAX_RECEIVE_COUNT, TABLE_KEYS, VISIBILITY_TIMEOUT_SECONDS } from "@mcpgw/aws";
import { emfNamespace } from "@mcpgw/telemetry";
import { MAX_CALL_MS } from "@mcpgw/upstream";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { NODE_OPTIONS } from "../../infra/bundling";
import type { StageSettings } from "../../infra/stages";
import { NODE_FLAGS } from "../../scripts/lib/node22";

const ROOT = resolve(import.meta.dirname, "../..");

// biome-ignore lint/suspicious/noExplicitAny: recorded component arguments are SST's, untyped here.
type Args = Record<string, any>;
interface Recorded {
  kind: string;
  name: string;
  args: Args;
}
interface Grant {
  actions: string[];
  resources: string[];
  conditions?: Array<{ test: string; variable: string; values: string[] }>;
}

const recorded: Recorded[] = [];
const find = (kind: string, name: string) => {
  const found = recorded.find((r) => r.kind === kind && r.name === name);
  if (!found) throw new Error(`no ${kind} named ${name} was created`);
  return found.args;
};

/** A recording stand-in for a component class; outputs are `<name>.<output>` strings. */
function component(kind: string, outputs: string[], extra: (name: string, args: Args) => Args = () => ({})) {
  return class {
    [key: string]: unknown;
    constructor(name: string, args: Args = {}) {
      recorded.push({ kind, name, args });
      for (const output of outputs) this[output] = `${name}.${output}`;
      Object.assign(this, { __name: name }, extra(name, args));
    }
  };
}

function installGlobals() {
  const LambdaFunction = component("Function", ["name", "url", "arn"]);
  const Queue = component("Queue", ["url", "arn"], (name) => ({
    subscribe: (fn: Args, args: Args) => {
      recorded.push({ kind: "QueueSubscriber", name, args: { function: fn, ...args } });
      return { nodes: { function: new LambdaFunction(`${name}Subscriber`, fn) } };
    },
  }));
  const Linkable = component("Linkable", [], (_name, definition) => ({ properties: definition.properties }));
  const globals = {
    $app: { name: "mcp-gateway", stage: "test" },
    $dev: false,
    $interpolate: (strings: TemplateStringsArray, ...values: unknown[]) =>
      String.raw({ raw: strings }, ...values),
    $config: (config: Args) => config,
    sst: {
      Linkable,
      Secret: component("Secret", ["value"]),
      aws: {
        permission: (input: Grant) => ({ type: "aws.permission", ...input }),
        Dynamo: component("Dynamo", ["name", "arn"]),
        Queue,
        Function: LambdaFunction,
        Cron: component("Cron", []),
        Vpc: component("Vpc", ["id"]),
        Cluster: component("Cluster", []),
        Service: component("Service", ["service", "url"], (name) => ({
          nodes: {
            autoScalingTarget: {
              serviceNamespace: "ecs",
              scalableDimension: "ecs:service:DesiredCount",
              resourceId: `${name}.resourceId`,
            },
          },
        })),
      },
    },
    aws: {
      getCallerIdentityOutput: () => ({ accountId: "123456789012" }),
      cognito: {
        UserPool: component("UserPool", ["id", "arn", "endpoint"]),
        UserGroup: component("UserGroup", ["name"]),
        UserPoolDomain: component("UserPoolDomain", ["domain"]),
        UserPoolClient: component("UserPoolClient", ["id", "clientSecret"]),
      },
      kms: { Key: component("KmsKey", ["keyId", "arn"]), Alias: component("KmsAlias", ["name"]) },
      ssm: { Parameter: component("SsmParameter", ["arn", "name"]) },
      appautoscaling: { Policy: component("ScalingPolicy", []) },
    },
  };
  Object.assign(globalThis, globals);
}

/** The link names and granted actions of one piece of compute. */
function grantsOf(args: Args): { links: string[]; actions: string[]; grants: Grant[] } {
  const linkables = (args.link ?? []) as Args[];
  const links = linkables.map((link) => link.__name as string);
  const included = linkables.flatMap((link) => {
    const definition = recorded.find((r) => r.kind === "Linkable" && r.name === link.__name)?.args;
    return ((definition?.include ?? []) as Array<Grant & { type: string }>).filter(
      (i) => i.type === "aws.permission",
    );
  });
  const grants = [...included, ...((args.permissions ?? []) as Grant[])];
  return { links, actions: [...new Set(grants.flatMap((g) => g.actions))].sort(), grants };
}

/** `path/file.export` → does path/file.ts export `export`? */
function handlerExists(handler: string): boolean {
  const [, file = "", name = ""] = /^(.*)\.(\w+)$/.exec(handler) ?? [];
  const source = join(ROOT, `${file}.ts`);
  return (
    existsSync(source) &&
    new RegExp(`export (const|async function|function) ${name}\\b`).test(readFileSync(source, "utf8"))
  );
}

let outputs: Args;

const CONFIG_URL = pathToFileURL(join(ROOT, "sst.config.ts")).href;
const STAGES_URL = pathToFileURL(join(ROOT, "infra/stages.ts")).href;
let evaluations = 0;

/**
 * sst.config.ts evaluated afresh for `stage`, with `settings` as that stage's entry in infra/stages.ts
 * when given (else the committed ones): what it built, or the error it stopped with.
 */
async function evaluate(
  stage: string,
  settings?: StageSettings,
): Promise<{ built: Recorded[]; outputs?: Args; error?: Error }> {
  const before = recorded.length;
  const app = (globalThis as unknown as { $app: { stage: string } }).$app;
  vi.resetModules();
  app.stage = stage;
  try {
    const stages = await import(/* @vite-ignore */ STAGES_URL);
    if (settings) stages.STAGES[stage] = settings;
    const config = (await import(/* @vite-ignore */ `${CONFIG_URL}?${++evaluations}`)).default as Args;
    const outputs = await config.run();
    return { built: recorded.slice(before), outputs };
  } catch (error) {
    return { built: recorded.slice(before), error: error as Error };
  } finally {
    app.stage = "test";
  }
}

/** The arguments of the `kind` named `name` among `built`. */
function pick(built: Recorded[], kind: string, name: string): Args {
  const found = built.find((r) => r.kind === kind && r.name === name);
  if (!found) throw new Error(`no ${kind} named ${name} was built`);
  return found.args;
}

beforeAll(async () => {
  installGlobals();
  const config = (await import(/* @vite-ignore */ pathToFileURL(join(ROOT, "sst.config.ts")).href))
    .default as Args;
  expect(config.app({ stage: "test" })).toMatchObject({
    name: "mcp-gateway",
    home: "aws",
    removal: "remove",
  });
  expect(config.app({ stage: "production" })).toMatchObject({ removal: "retain", protect: true });
  outputs = await config.run();
});

describe("sst.config.ts run()", () => {
  it("returns the admin and gateway URLs, the MCP endpoint and the table", () => {
    expect(outputs).toEqual({
      admin: "Admin.url",
      gateway: "Gateway.url",
      mcp: "Gateway.urlmcp",
      table: "GatewayTable.name",
    });
  });

  it("creates the table exactly as bootstrap.ts does: pk/sk, byKind (ALL), byChange (keys only), TTL", () => {
    const table = find("Dynamo", "GatewayTable");
    const { partition, sort, byKindIndex, kind, kindSort, byChangeIndex, changeFeed, changedAt, ttl } =
      TABLE_KEYS;
    expect(table.fields).toEqual({
      [partition]: "string",
      [sort]: "string",
      [kind]: "string",
      [kindSort]: "string",
      [changeFeed]: "string",
      [changedAt]: "string",
    });
    expect(table.primaryIndex).toEqual({ hashKey: partition, rangeKey: sort });
    expect(table.globalIndexes).toEqual({
      [byKindIndex]: { hashKey: kind, rangeKey: kindSort, projection: "all" },
      [byChangeIndex]: { hashKey: changeFeed, rangeKey: changedAt, projection: "keys-only" },
    });
    expect(table.ttl).toBe(ttl);
  });

  it("gives the job queue bootstrap.ts's visibility timeout and dead-letter queue after the same receive count", () => {
    const queue = find("Queue", "JobQueue");
    expect(queue.visibilityTimeout).toBe(`${VISIBILITY_TIMEOUT_SECONDS} seconds`);
    expect(queue.dlq).toEqual({ queue: "JobDeadLetterQueue.arn", retry: MAX_RECEIVE_COUNT });
  });

  it("subscribes the worker with partial batch responses, within the visibility timeout", () => {
    const { function: worker, batch } = find("QueueSubscriber", "JobQueue");
    expect(batch.partialResponses).toBe(true);
    expect(handlerExists(worker.handler)).toBe(true);
    expect(Number.parseInt(worker.timeout, 10)).toBeLessThan(VISIBILITY_TIMEOUT_SECONDS);
    expect(worker.vpc).toBeDefined();
  });

  it("runs the sweep every minute from the worker's sweepHandler", () => {
    const cron = find("Cron", "HealthSweep");
    expect(cron.schedule).toBe("rate(1 minute)");
    expect(cron.function.handler).toBe("packages/worker/src/lambda.sweepHandler");
    expect(handlerExists(cron.function.handler)).toBe(true);
  });

  it.each(["Admin", "Gateway"])(
    "serves %s on a Function URL, in the VPC, with private upstreams off",
    (name) => {
      const fn = find("Function", name);
      expect(fn.url).toBe(true);
      expect(handlerExists(fn.handler)).toBe(true);
      expect(fn.vpc).toBeDefined();
      expect(fn.environment).toMatchObject({ ALLOW_PRIVATE_UPSTREAMS: "false" });
    },
  );

  it("serves the admin console from the admin function: its built files beside the handler, calls forwarded to the gateway", () => {
    const admin = find("Function", "Admin");
    expect(admin.environment).toEqual({
      NODE_OPTIONS,
      ALLOW_PRIVATE_UPSTREAMS: "false",
      RUNNER_FLEET: "true",
      METRICS_NAMESPACE: "MCPGateway/test",
      GATEWAY_URL: "Gateway.url",
      CONSOLE_ADMIN_GROUP: "gateway-admins",
    });
    expect(find("Function", "Gateway").environment).toEqual({
      NODE_OPTIONS,
      ALLOW_PRIVATE_UPSTREAMS: "false",
      RUNNER_FLEET: "true",
      METRICS_NAMESPACE: "MCPGateway/test",
    });
    expect(admin.copyFiles).toEqual([{ from: "packages/console/dist", to: "console" }]);
    // infra/console.ts built it while the config ran.
    expect(existsSync(join(ROOT, "packages/console/dist/index.html"))).toBe(true);
    expect(readFileSync(join(ROOT, admin.handler.replace(/\.\w+$/, ".ts")), "utf8")).toMatch(
      /loadConsoleAssets\(consoleDir\)/,
    );
  });

  it("runs every function, the runner and every local process with async context frames (tracing without a promise hook per promise)", () => {
    expect(NODE_OPTIONS).toBe("--experimental-async-context-frame");
    expect(NODE_FLAGS).toBe(NODE_OPTIONS);
    for (const name of ["Admin", "Gateway"])
      expect(find("Function", name).environment.NODE_OPTIONS).toBe(NODE_OPTIONS);
    expect(find("QueueSubscriber", "JobQueue").function.environment.NODE_OPTIONS).toBe(NODE_OPTIONS);
    expect(find("Cron", "HealthSweep").function.environment.NODE_OPTIONS).toBe(NODE_OPTIONS);
    const dockerfile = readFileSync(join(ROOT, "packages/runner/Dockerfile"), "utf8");
    expect(dockerfile).toContain(`CMD ["node", "${NODE_OPTIONS}", "runner/index.mjs"]`);
    // npm's scripts start through scripts/node22.mjs, which passes the flag on to what they run (on
    // Node 22 and 23; later ones have async context frames by default).
    if (Number(process.versions.node.split(".")[0]) < 24)
      expect(process.env.NODE_OPTIONS?.split(/\s+/)).toContain(NODE_FLAGS);
  });

  it("streams the gateway's responses (RESPONSE_STREAM URL, a streaming handler); the admin API is buffered", () => {
    const gateway = find("Function", "Gateway");
    const admin = find("Function", "Admin");
    expect(gateway.streaming).toBe(true);
    expect(admin.streaming ?? false).toBe(false);
    const source = (handler: string) =>
      readFileSync(join(ROOT, `${handler.replace(/\.\w+$/, "")}.ts`), "utf8");
    expect(source(gateway.handler)).toMatch(/export const handler = streamingHandler\(/);
    expect(source(admin.handler)).toMatch(/export const handler = flushingLogs\(\s*handle\(/);
  });

  it("gives the gateway a timeout (what bounds a stream) as long as a tool call may run, within Lambda's 900 s", () => {
    const { timeout } = find("Function", "Gateway");
    const minutes = Number(/^(\d+) minutes$/.exec(timeout)?.[1]);
    expect(minutes * 60_000).toBeGreaterThanOrEqual(MAX_CALL_MS);
    expect(minutes * 60).toBeLessThanOrEqual(900);
  });

  it("builds the runner from packages/runner/Dockerfile with the repo root as context, runnable by sst dev", () => {
    const runner = find("Service", "StdioRunner");
    expect(runner.image).toEqual({ context: ".", dockerfile: "packages/runner/Dockerfile" });
    expect(existsSync(join(ROOT, runner.image.context, runner.image.dockerfile))).toBe(true);
    expect(runner.dev.command).toBe("npx tsx packages/runner/src/main.ts");
    expect(existsSync(join(ROOT, "packages/runner/src/main.ts"))).toBe(true);
    expect(runner.serviceRegistry).toEqual({ port: 8788 });
    expect(runner.ssm).toEqual({ RUNNER_TOKEN: "RunnerTokenParameter.arn" });
    expect(find("Linkable", "Runner").properties).toEqual({ url: "http://StdioRunner.service:8788" });
  });
});

describe("sign-in at an OpenID provider", () => {
  it("creates a Cognito user pool by default: invitation only, a confidential code-flow client, an admins group", () => {
    const pool = find("UserPool", "Users");
    const client = find("UserPoolClient", "GatewayClient");

    expect(pool).toMatchObject({ adminCreateUserConfig: { allowAdminCreateUserOnly: true } });
    expect(client).toMatchObject({
      userPoolId: "Users.id",
      generateSecret: true,
      allowedOauthFlowsUserPoolClient: true,
      allowedOauthFlows: ["code"],
      allowedOauthScopes: ["openid", "email", "profile"],
    });
    // The callbacks the routes serve (here, outside production with no public URLs set: npm run dev's,
    // on the origin it signs in with: http://127.0.0.1:$PORT, PORT 8787 by default).
    expect(client.callbackUrls).toEqual([
      "http://127.0.0.1:8787/oauth/oidc/callback",
      "http://127.0.0.1:8787/console/oidc/callback",
      "http://127.0.0.1:8787/oauth/upstream/signin",
    ]);
    const dev = readFileSync(join(ROOT, "scripts/dev.ts"), "utf8");
    expect(dev).toContain('read.integer("PORT", 8787');
    expect(dev).toMatch(/issuer: settings\.oauthIssuer \?\? `http:\/\/127\.0\.0\.1:\$\{port\}`/);
    expect(dev).toMatch(/publicAdminUrl: settings\.publicAdminUrl \?\? `http:\/\/127\.0\.0\.1:\$\{port\}`/);
    expect(find("UserGroup", "ConsoleAdmins")).toMatchObject({
      userPoolId: "Users.id",
      name: "gateway-admins",
    });
    expect(find("UserPoolDomain", "UsersDomain").domain).toBe("mcp-gateway-test-123456789012");
  });

  it("links the pool's issuer, client and groups claim to the functions as `Oidc`, the secret inside the link", () => {
    expect(find("Linkable", "Oidc").properties).toEqual({
      issuer: "https://Users.endpoint",
      clientId: "GatewayClient.id",
      clientSecret: "GatewayClient.clientSecret",
      groupsClaim: "cognito:groups",
      providerName: "Cognito",
    });
    for (const name of ["Admin", "Gateway"]) {
      expect(JSON.stringify(find("Function", name).environment)).not.toContain("clientSecret");
    }
    const routes = readFileSync(join(ROOT, "packages/api/src/oauth/routes.ts"), "utf8");
    const console = readFileSync(join(ROOT, "packages/api/src/console/provider-sign-in.ts"), "utf8");
    expect(routes).toContain('OIDC_CALLBACK_PATH = "/oauth/oidc/callback"');
    expect(console).toContain('CONSOLE_OIDC_CALLBACK = "/console/oidc/callback"');
    const link = readFileSync(join(ROOT, "packages/api/src/admin/upstream-link.ts"), "utf8");
    expect(link).toContain('UPSTREAM_SIGNIN_PATH = "/oauth/upstream/signin"');
  });

  it("takes the stage's own provider instead (infra/stages.ts): no pool, the secret an SST secret", async () => {
    // Act
    const { built, error } = await evaluate("acme", {
      signIn: {
        issuer: "https://login.microsoftonline.com/tenant/v2.0",
        clientId: "entra-app",
        tokenAuthMethod: "client_secret_post",
      },
      oauthIssuer: "https://mcp.example.com/",
      publicAdminUrl: "https://admin.example.com",
      consoleAdmins: "boss@example.com",
    });

    // Assess
    expect(error).toBeUndefined();
    expect(built.map((r) => r.kind)).not.toContain("UserPool");
    expect(built.some((r) => r.kind === "Secret" && r.name === "OidcClientSecret")).toBe(true);
    expect(pick(built, "Linkable", "Oidc").properties).toEqual({
      issuer: "https://login.microsoftonline.com/tenant/v2.0",
      clientId: "entra-app",
      clientSecret: "OidcClientSecret.value",
      groupsClaim: "",
      providerName: "",
    });
    const admin = pick(built, "Function", "Admin");
    expect(admin.environment).toMatchObject({
      CONSOLE_ADMINS: "boss@example.com",
      OIDC_TOKEN_AUTH_METHOD: "client_secret_post",
    });
    expect(admin.environment).not.toHaveProperty("CONSOLE_ADMIN_GROUP");
    // A per-user upstream authorization starts on the gateway and comes back to the admin function.
    expect(pick(built, "Function", "Gateway").environment).toMatchObject({
      OAUTH_ISSUER: "https://mcp.example.com",
      PUBLIC_ADMIN_URL: "https://admin.example.com",
    });
  });

  it("reads nothing from the deployer's shell: a redeploy with other OAUTH_ISSUER/OIDC_*/PUBLIC_ADMIN_URL/WORKTREE_BASE deploys the same", async () => {
    // Prepare
    const plain = await evaluate("test");
    const saved = { ...process.env };
    Object.assign(process.env, {
      OAUTH_ISSUER: "https://elsewhere.example.com",
      PUBLIC_ADMIN_URL: "https://admin.elsewhere.example.com",
      OIDC_ISSUER: "https://login.elsewhere.example.com",
      OIDC_CLIENT_ID: "other-app",
      OIDC_GROUPS_CLAIM: "roles",
      OIDC_PROVIDER_NAME: "Elsewhere",
      OIDC_TOKEN_AUTH_METHOD: "client_secret_post",
      WORKTREE_BASE: "/srv/elsewhere",
      CONSOLE_ADMIN_GROUP: "other-admins",
      CONSOLE_ADMINS: "someone@example.com",
    });

    // Act
    let shell: Awaited<ReturnType<typeof evaluate>>;
    try {
      shell = await evaluate("test");
    } finally {
      process.env = saved;
    }

    // Assess
    expect(plain.error).toBeUndefined();
    expect(shell.error).toBeUndefined();
    expect(shell.built).toEqual(plain.built);
    expect(pick(shell.built, "Linkable", "Oidc").properties.issuer).toBe("https://Users.endpoint");
  });
});

describe("production (the stage `production`, named alike by the infra and the docs)", () => {
  const PRODUCTION_URLS = {
    oauthIssuer: "https://mcp.example.com",
    publicAdminUrl: "https://admin.example.com/",
  };

  it("is the one stage retained and protected; `prod` or any other name is not production", async () => {
    const { PRODUCTION_STAGE, isProduction } = await import(/* @vite-ignore */ STAGES_URL);
    const config = (await import(/* @vite-ignore */ CONFIG_URL)).default as Args;
    expect(PRODUCTION_STAGE).toBe("production");
    for (const stage of ["production", "prod", "Production", "staging", "test"]) {
      const app = config.app({ stage });
      expect(app.protect, stage).toBe(isProduction(stage));
      expect(app.removal, stage).toBe(isProduction(stage) ? "retain" : "remove");
    }
  });

  it("deploys with deletion protection, point-in-time recovery, 30-day key windows, managed NAT and only its own callbacks", async () => {
    // Act
    const { built, error } = await evaluate("production", PRODUCTION_URLS);

    // Assess
    expect(error).toBeUndefined();
    const table = pick(built, "Dynamo", "GatewayTable");
    expect(table.deletionProtection).toBe(true);
    expect(table.transform.table.pointInTimeRecovery).toEqual({ enabled: true });
    expect(pick(built, "UserPool", "Users").deletionProtection).toBe("ACTIVE");
    expect(pick(built, "KmsKey", "SealingKey").deletionWindowInDays).toBe(30);
    expect(pick(built, "KmsKey", "TokenSigningKey").deletionWindowInDays).toBe(30);
    expect(pick(built, "Vpc", "Vpc").nat).toBe("managed");
    // Callbacks from the stage's public URLs; no npm run dev callback in production.
    expect(pick(built, "UserPoolClient", "GatewayClient").callbackUrls).toEqual([
      "https://mcp.example.com/oauth/oidc/callback",
      "https://admin.example.com/console/oidc/callback",
      "https://admin.example.com/oauth/upstream/signin",
    ]);
    expect(pick(built, "Function", "Gateway").environment).toMatchObject({
      OAUTH_ISSUER: "https://mcp.example.com",
      PUBLIC_ADMIN_URL: "https://admin.example.com",
    });
  });

  it("fails before building anything, naming the missing settings, when production would give its provider no callback URL", async () => {
    // Act: production as committed names no public URLs; then with one of the two.
    const committed = await evaluate("production");
    const half = await evaluate("production", { oauthIssuer: "https://mcp.example.com" });

    // Assess
    expect(committed.error?.message).toBe(
      'Production signs people in, so its provider needs callback URLs: set oauthIssuer and publicAdminUrl for stage "production" in infra/stages.ts (your domains, or the gateway and admin outputs of a first deploy with signIn: "off").',
    );
    expect(committed.built).toEqual([]);
    expect(half.error?.message).toMatch(
      /^Production signs people in, .*: set publicAdminUrl for stage "production"/,
    );
    expect(half.built).toEqual([]);
    const wrong = await evaluate("staging", { publicAdminUrl: "http://admin.example.com" });
    expect(wrong.error?.message).toBe(
      'publicAdminUrl for stage "staging" in infra/stages.ts must be an https origin (got "http://admin.example.com").',
    );
  });

  it('deploys a first production without sign-in (signIn: "off"): no pool, an empty Oidc link', async () => {
    const { built, error, outputs } = await evaluate("production", { signIn: "off" });
    expect(error).toBeUndefined();
    expect(built.map((r) => r.kind)).not.toContain("UserPoolClient");
    expect(pick(built, "Linkable", "Oidc").properties).toEqual({
      issuer: "",
      clientId: "",
      clientSecret: "",
      groupsClaim: "",
      providerName: "",
    });
    expect(Object.keys(outputs ?? {})).toEqual(["admin", "gateway", "mcp", "table"]);
  });

  it("runs the stdio runners as a fleet (2 to 6 tasks by default, scaled on CPU, memory and children per task) that the functions and each task know as one", async () => {
    const runner = find("Service", "StdioRunner");
    expect(runner.scaling).toEqual({ min: 2, max: 6, cpuUtilization: 60, memoryUtilization: 70 });
    // And on children per task: the gauge each task writes, in this stage's own namespace, held at 35.
    const policy = find("ScalingPolicy", "StdioRunnerChildrenPolicy");
    expect(policy).toMatchObject({
      resourceId: "StdioRunner.resourceId",
      scalableDimension: "ecs:service:DesiredCount",
      policyType: "TargetTrackingScaling",
      targetTrackingScalingPolicyConfiguration: {
        targetValue: 35,
        customizedMetricSpecification: {
          metricName: "mcpgw_runner_task_children",
          namespace: "MCPGateway/test",
          dimensions: [{ name: "service", value: "runner" }],
          statistic: "Average",
        },
      },
    });
    expect(readFileSync(join(ROOT, "packages/telemetry/src/instruments.ts"), "utf8")).toContain(
      '"mcpgw_runner_task_children"',
    );
    // Every process writes its metrics where the policy reads them (and the stage's dashboards look).
    for (const fn of [
      runner,
      find("Function", "Admin"),
      find("Function", "Gateway"),
      find("QueueSubscriber", "JobQueue").function,
      find("Cron", "HealthSweep").function,
    ])
      expect(emfNamespace(fn.environment)).toBe("MCPGateway/test");
    // A deploy rolls with ECS's defaults: new tasks register before old ones drain.
    expect(runner.transform?.service).toBeUndefined();
    expect(runner.environment.RUNNER_FLEET).toBe("true");
    for (const fn of [
      find("Function", "Admin"),
      find("Function", "Gateway"),
      find("QueueSubscriber", "JobQueue").function,
    ])
      expect(fn.environment.RUNNER_FLEET).toBe("true");
    // The health check is the face's /healthz, which answers 503 once the task's registration lapsed.
    expect(runner.health.command.join(" ")).toContain("/healthz");
    const { built } = await evaluate("staging", { runners: { min: 3, max: 12 } });
    expect(pick(built, "Service", "StdioRunner").scaling).toMatchObject({ min: 3, max: 12 });
    const { error } = await evaluate("staging", { runners: { min: 4, max: 2 } });
    expect(String(error)).toMatch(/runners in infra\/stages\.ts must have whole numbers 1 ≤ min ≤ max/);
    const fewer = await evaluate("staging", { runners: { childrenPerTask: 20 } });
    expect(
      pick(fewer.built, "ScalingPolicy", "StdioRunnerChildrenPolicy").targetTrackingScalingPolicyConfiguration
        .targetValue,
    ).toBe(20);
    const tooMany = await evaluate("staging", { runners: { childrenPerTask: 80 } });
    expect(String(tooMany.error)).toMatch(/runners\.childrenPerTask .* from 1 to 50/);
    expect(find("Dynamo", "GatewayTable").transform.table.pointInTimeRecovery).toEqual({ enabled: true });
  });

  it("reserves concurrency only where a stage sets it (none by default)", async () => {
    for (const fn of [
      find("Function", "Admin"),
      find("Function", "Gateway"),
      find("QueueSubscriber", "JobQueue").function,
    ]) {
      expect(fn).not.toHaveProperty("concurrency");
    }
    const { built } = await evaluate("staging", { reservedConcurrency: { gateway: 50, worker: 5 } });
    expect(pick(built, "Function", "Gateway").concurrency).toEqual({ reserved: 50 });
    expect(pick(built, "QueueSubscriber", "JobQueue").function.concurrency).toEqual({ reserved: 5 });
    expect(pick(built, "Function", "Admin")).not.toHaveProperty("concurrency");
  });

  it("is the stage the docs deploy: `--stage production`, never `--stage prod`", () => {
    for (const doc of ["README.md", "docs/operations.md", "docs/security.md", "docs/architecture.md"]) {
      const text = readFileSync(join(ROOT, doc), "utf8");
      expect(text, doc).not.toMatch(/--stage prod\b/);
    }
    expect(readFileSync(join(ROOT, "docs/operations.md"), "utf8")).toContain(
      "npx sst deploy --stage production",
    );
  });
});

describe("least privilege", () => {
  const compute = () => ({
    admin: grantsOf(find("Function", "Admin")),
    gateway: grantsOf(find("Function", "Gateway")),
    worker: grantsOf(find("QueueSubscriber", "JobQueue").function),
    sweep: grantsOf(find("Cron", "HealthSweep").function),
    runner: grantsOf(find("Service", "StdioRunner")),
  });

  it("links each piece of compute to only what it uses", () => {
    const links = Object.fromEntries(Object.entries(compute()).map(([name, g]) => [name, g.links.sort()]));
    expect(links).toEqual({
      admin: ["AdminToken", "Jobs", "Key", "Oidc", "Runner", "RunnerToken", "Table"],
      gateway: ["AdminToken", "Jobs", "Key", "Oidc", "Runner", "RunnerToken", "SigningKey", "Table"],
      worker: ["Jobs", "Key", "Runner", "RunnerToken", "Table"],
      sweep: ["Jobs", "Table"],
      runner: ["Jobs", "Table"],
    });
  });

  it("lets only the functions that store upstream credentials seal (admin; worker and gateway: refreshed and per-user tokens)", () => {
    const kms = Object.fromEntries(
      Object.entries(compute()).map(([name, g]) => [name, g.actions.filter((a) => a.startsWith("kms:"))]),
    );
    expect(kms).toEqual({
      admin: ["kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKey"],
      gateway: ["kms:Decrypt", "kms:DescribeKey", "kms:GenerateDataKey", "kms:GetPublicKey", "kms:Sign"],
      worker: ["kms:Decrypt", "kms:GenerateDataKey"],
      sweep: [],
      runner: ["kms:Decrypt"],
    });
    // The admin function seals under any context; the gateway and the worker only under upstream
    // OAuth's contexts (upstream-credentials.ts), never a server's headers or env.
    const sealing = (g: { grants: Grant[] }) =>
      g.grants
        .filter((grant) => grant.actions.includes("kms:GenerateDataKey"))
        .map((grant) => grant.conditions);
    const { admin, gateway, worker } = compute();
    const tokens = [
      { test: "StringEquals", variable: "kms:EncryptionContext:mcpgw:field", values: ["upstream-oauth"] },
    ];
    const underWay = [
      { test: "Null", variable: "kms:EncryptionContext:mcpgw:upstream-oauth-state", values: ["false"] },
    ];
    expect(sealing(admin)).toEqual([undefined]);
    expect(sealing(gateway)).toEqual([tokens, underWay]);
    expect(sealing(worker)).toEqual([tokens]);
    const contexts = readFileSync(join(ROOT, "packages/aws/src/upstream-credentials.ts"), "utf8");
    expect(contexts).toContain('"mcpgw:field": "upstream-oauth"');
    expect(contexts).toContain('{ "mcpgw:upstream-oauth-state": stateHash }');
  });

  it("is what the docs' table of grants says (docs/operations.md), row by row, and the docs say no other", () => {
    // Prepare: the table under "| IAM action" — first cell the actions, then one column per piece of compute
    const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const lines = doc.slice(doc.indexOf("| IAM action")).split("\n");
    const rows = lines
      .slice(
        0,
        lines.findIndex((line) => !line.startsWith("|")),
      )
      .map((line) =>
        line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    const [header = [], , ...body] = rows;
    const columns: Record<string, string> = {
      Admin: "admin",
      Gateway: "gateway",
      worker: "worker",
      sweep: "sweep",
      runner: "runner",
    };
    const condition = (c: { test: string; variable: string; values: string[] }) => {
      const key = `\`${c.variable.replace("kms:EncryptionContext:", "")}\``;
      if (c.test === "Null" && c.values[0] === "false") return `${key} set`;
      return `${key} = ${c.values.map((v) => `\`${v}\``).join(", ")}`;
    };
    /** How the docs write one piece's grant of one action: yes, —, or the conditions it holds under. */
    const cell = (grants: Grant[], action: string) => {
      const granting = grants.filter((g) => g.actions.includes(action));
      if (granting.length === 0) return "—";
      if (granting.some((g) => !g.conditions?.length)) return "yes";
      return granting.map((g) => g.conditions?.map(condition).join(" and ")).join(" or ");
    };
    const computed = compute() as Record<string, { grants: Grant[]; actions: string[] }>;

    // Assess
    expect(header.slice(1)).toEqual(Object.keys(columns));
    const documented = new Set<string>();
    for (const row of body) {
      const actions = [...(row[0] ?? "").matchAll(/`([a-z0-9]+:[A-Za-z]+)`/g)].map((m) => m[1]!);
      expect(actions.length, row[0]).toBeGreaterThan(0);
      for (const action of actions) {
        documented.add(action);
        const infra = Object.values(columns).map((name) => cell(computed[name]!.grants, action));
        expect(row.slice(1), `${action} as infra/ grants it`).toEqual(infra);
      }
    }
    const granted = new Set(Object.values(computed).flatMap((g) => g.actions));
    expect([...documented].sort()).toEqual([...granted].sort());
    // The sentence the table replaced is gone from both docs.
    for (const file of ["docs/operations.md", "docs/security.md"]) {
      expect(readFileSync(join(ROOT, file), "utf8"), file).not.toMatch(/only `Admin`\s+may seal/);
    }
  });

  it("lets only the gateway sign access tokens, with the asymmetric P-256 key bootstrap.ts makes", () => {
    const key = find("KmsKey", "TokenSigningKey");
    expect(key).toMatchObject({ customerMasterKeySpec: "ECC_NIST_P256", keyUsage: "SIGN_VERIFY" });
    const bootstrap = readFileSync(join(ROOT, "packages/aws/src/bootstrap.ts"), "utf8");
    expect(bootstrap).toMatch(/KeySpec: "ECC_NIST_P256",\s+KeyUsage: "SIGN_VERIFY"/);
    const signers = Object.entries(compute()).flatMap(([name, g]) =>
      g.grants.some((grant) => grant.actions.includes("kms:Sign")) ? [name] : [],
    );
    expect(signers).toEqual(["gateway"]);
    const { gateway } = compute();
    const grant = gateway.grants.find((g) => g.actions.includes("kms:Sign"));
    expect(grant).toMatchObject({
      actions: ["kms:Sign", "kms:GetPublicKey"],
      resources: ["TokenSigningKey.arn"],
    });
  });

  it("grants /readyz's two reads (queue attributes, key metadata) to the API functions, and the queue's attributes to the sweep (its depth), on their resources", () => {
    const reads = ["sqs:GetQueueAttributes", "kms:DescribeKey"];
    const granted = Object.fromEntries(
      Object.entries(compute()).map(([name, g]) => [name, g.actions.filter((a) => reads.includes(a))]),
    );
    expect(granted).toEqual({
      admin: ["kms:DescribeKey", "sqs:GetQueueAttributes"],
      gateway: ["kms:DescribeKey", "sqs:GetQueueAttributes"],
      worker: [],
      sweep: ["sqs:GetQueueAttributes"],
      runner: [],
    });
    const { gateway } = compute();
    const resourcesOf = (action: string) =>
      gateway.grants.filter((g) => g.actions.includes(action)).flatMap((g) => g.resources);
    expect(resourcesOf("sqs:GetQueueAttributes")).toEqual(["JobQueue.arn"]);
    expect(resourcesOf("kms:DescribeKey")).toEqual(["SealingKey.arn"]);
  });

  it("lets the runner open only stdio env and secret-store values (KMS grants conditioned on the context)", () => {
    const { runner } = compute();
    const decrypts = runner.grants.filter((g) => g.actions.includes("kms:Decrypt"));
    expect(decrypts.map((g) => g.conditions)).toEqual([
      [{ test: "StringEquals", variable: "kms:EncryptionContext:mcpgw:field", values: ["env"] }],
      [{ test: "Null", variable: "kms:EncryptionContext:mcpgw:secret", values: ["false"] }],
    ]);
    // The contexts the code seals under are the ones those conditions name.
    const sealing = readFileSync(join(ROOT, "packages/aws/src/sealing.ts"), "utf8");
    expect(sealing).toContain('{ "mcpgw:server": serverId, "mcpgw:field": field }');
    expect(sealing).toContain('{ "mcpgw:secret": name }');
    expect(find("Service", "StdioRunner").environment.KMS_KEY_ID).toBe("SealingKey.arn");
  });

  it("grants no wildcard action and no wildcard resource", () => {
    for (const [name, { grants }] of Object.entries(compute())) {
      for (const grant of grants) {
        expect(
          grant.actions.filter((a) => a.includes("*")),
          name,
        ).toEqual([]);
        expect(
          grant.resources.filter((r) => r === "*"),
          name,
        ).toEqual([]);
      }
    }
  });

  it("grants every AWS call the deployed code makes (a new command must be granted in infra/ first)", () => {
    // Prepare: the AWS SDK commands in packages/*/src, less the local-only bootstrap, poller and
    // npm run dev's start-up check of a given endpoint
    const LOCAL_ONLY = new Set([
      "packages/aws/src/bootstrap.ts",
      "packages/worker/src/poller.ts",
      "packages/aws/src/endpoint-check.ts",
    ]);
    const COMMAND_ACTIONS: Record<string, string[]> = {
      GetCommand: ["dynamodb:GetItem"],
      BatchGetCommand: ["dynamodb:BatchGetItem"],
      TransactGetCommand: ["dynamodb:GetItem"],
      QueryCommand: ["dynamodb:Query"],
      PutCommand: ["dynamodb:PutItem"],
      UpdateCommand: ["dynamodb:UpdateItem"],
      DeleteCommand: ["dynamodb:DeleteItem"],
      BatchWriteCommand: ["dynamodb:BatchWriteItem"],
      TransactWriteCommand: [
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
        "dynamodb:ConditionCheckItem",
      ],
      SendMessageCommand: ["sqs:SendMessage"],
      SendMessageBatchCommand: ["sqs:SendMessage"],
      // The readiness checks (GET /readyz); their GetItem is a GetCommand.
      GetQueueAttributesCommand: ["sqs:GetQueueAttributes"],
      DescribeKeyCommand: ["kms:DescribeKey"],
      // Only without the Jobs link (local runs); deployed, the queue URL is linked.
      GetQueueUrlCommand: [],
      // Only the local poller calls jobs.receive/ack; deployed, the SQS event source receives and deletes.
      ReceiveMessageCommand: [],
      DeleteMessageBatchCommand: [],
      DecryptCommand: ["kms:Decrypt"],
      GenerateDataKeyCommand: ["kms:GenerateDataKey"],
      // The gateway's access-token signer (the admin function never signs).
      SignCommand: ["kms:Sign"],
      GetPublicKeyCommand: ["kms:GetPublicKey"],
    };
    /** Commands only the gateway function sends; every other one is checked against the admin function. */
    const GATEWAY_ONLY = new Set(["SignCommand", "GetPublicKeyCommand"]);
    const sources = readdirSync(join(ROOT, "packages"), { recursive: true, encoding: "utf8" })
      .map((file) => relative(ROOT, join(ROOT, "packages", file)))
      .filter((file) => /\/src\/.*\.ts$/.test(file) && !file.endsWith(".test.ts") && !LOCAL_ONLY.has(file));
    const commands = new Set(
      sources.flatMap((file) =>
        [...readFileSync(join(ROOT, file), "utf8").matchAll(/new (\w+Command)\(/g)].map((m) => m[1]!),
      ),
    );
    const { admin, gateway } = compute();

    // Assess
    expect(commands.size).toBeGreaterThan(0);
    for (const command of commands) {
      const actions = COMMAND_ACTIONS[command];
      expect(actions, `${command}: map it to IAM actions here and grant them in infra/`).toBeDefined();
      const granted = GATEWAY_ONLY.has(command) ? gateway.actions : admin.actions;
      for (const action of actions ?? []) expect(granted, `${command} needs ${action}`).toContain(action);
    }
  });

  it("matches the link names the config module reads and sst-env.d.ts declares", () => {
    const config = readFileSync(join(ROOT, "packages/aws/src/config.ts"), "utf8");
    const read =
      /type LinkName = ([^;]+);/
        .exec(config)?.[1]
        ?.match(/"(\w+)"/g)
        ?.map((n) => n.slice(1, -1)) ?? [];
    const declared = [...readFileSync(join(ROOT, "sst-env.d.ts"), "utf8").matchAll(/^ {4}"(\w+)": \{/gm)].map(
      (m) => m[1],
    );
    const linked = new Set(Object.values(compute()).flatMap((g) => g.links));
    expect(read.length).toBeGreaterThan(0);
    for (const name of read) {
      expect(linked, `config.ts reads ${name}`).toContain(name);
      expect(declared, `sst-env.d.ts declares ${name}`).toContain(name);
    }
  });
});
