/**
 * The one typed reader of runtime configuration. Deployed, SST links resources into the environment
 * (`SST_RESOURCE_<Name>` JSON); locally the plain variables below (or their defaults) name them.
 */

export interface AwsConfig {
  region: string;
  /** An emulator endpoint (moto, LocalStack); undefined on AWS. */
  endpoint: string | undefined;
  tableName: string;
  queueName: string;
  /** Known when deployed (SST link); resolved by name otherwise. */
  queueUrl: string | undefined;
  deadLetterQueueName: string;
  /** KMS key id, ARN or `alias/…`. */
  keyId: string;
  /** The alias the local bootstrap creates for the key. */
  keyAlias: string;
}

type Env = Record<string, string | undefined>;

/** A linked SST resource's properties, when running deployed. */
function sstResource(env: Env, name: string): Record<string, string> | undefined {
  const raw = env[`SST_RESOURCE_${name}`];
  return raw ? (JSON.parse(raw) as Record<string, string>) : undefined;
}

/** AWS resource names and endpoint, from SST links when deployed and from env/defaults locally. */
export function loadAwsConfig(env: Env = process.env): AwsConfig {
  const keyAlias = env.KMS_KEY_ALIAS ?? "alias/mcp-gateway";
  return {
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
    endpoint: env.AWS_ENDPOINT_URL || undefined,
    tableName: sstResource(env, "Table")?.name ?? env.TABLE_NAME ?? "mcp-gateway",
    queueName: env.QUEUE_NAME ?? "mcp-gateway-jobs",
    queueUrl: sstResource(env, "Jobs")?.url,
    deadLetterQueueName: env.DEAD_LETTER_QUEUE_NAME ?? "mcp-gateway-jobs-dlq",
    keyId: sstResource(env, "Key")?.id ?? env.KMS_KEY_ID ?? keyAlias,
    keyAlias,
  };
}

/** Reads a required variable; throws naming it when it is missing or empty. */
export function requireEnv(name: string, env: Env = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

/** Settings of the running system (not AWS resource names). */
export interface AppSettings {
  adminToken: string;
  /** Allow upstreams on loopback/private addresses (on in `npm run dev`, off by default deployed). */
  allowPrivateUpstreams: boolean;
  /** Seconds between health sweeps. */
  sweepIntervalSeconds: number;
  /** The stdio runner's URL and shared token, when there is a runner. */
  runner: { url: string; token: string } | undefined;
  /** Browser origins allowed on the MCP endpoints besides loopback ones. */
  mcpAllowedOrigins: string[];
}

/** App settings from SST secrets when deployed, env locally. Throws when the admin token is missing. */
export function loadAppSettings(env: Env = process.env): AppSettings {
  return {
    adminToken: sstResource(env, "AdminToken")?.value ?? requireEnv("ADMIN_TOKEN", env),
    allowPrivateUpstreams: /^(1|true|yes)$/i.test(env.ALLOW_PRIVATE_UPSTREAMS ?? ""),
    sweepIntervalSeconds: Number(env.SWEEP_INTERVAL_SECONDS ?? 60),
    runner: runnerEndpoint(env),
    mcpAllowedOrigins: (env.MCP_ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((o) => o.trim())
      .filter(Boolean),
  };
}

function runnerEndpoint(env: Env): AppSettings["runner"] {
  const url = sstResource(env, "Runner")?.url ?? env.RUNNER_URL;
  const token = sstResource(env, "RunnerToken")?.value ?? env.RUNNER_TOKEN;
  return url && token ? { url, token } : undefined;
}
