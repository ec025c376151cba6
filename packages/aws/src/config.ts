/// <reference path="../../../sst-env.d.ts" />
/**
 * The one typed reader of runtime configuration. Deployed, SST links resources (`Resource.<Name>`,
 * typed by sst-env.d.ts): as `SST_RESOURCE_<Name>` JSON in containers and `sst dev`, and as an
 * encrypted link file in Lambda bundles. Locally the plain variables below (or their defaults) name them.
 */
import { posix } from "node:path";
import { fromHttp } from "@aws-sdk/credential-provider-http";
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@aws-sdk/types";
import {
  DEFAULT_CHILD_LIMITS,
  defaultWorktreeBase,
  PINNING_MODES,
  type Pinning,
  type ResolvedLimits,
} from "@mcpgw/core";
import { Resource } from "sst/resource";
import { EnvReader } from "./env-reader";

export interface AwsConfig {
  region: string;
  /** An emulator endpoint (moto, LocalStack) for every service (AWS_ENDPOINT_URL); undefined on AWS. */
  endpoint: string | undefined;
  /**
   * A service's own emulator endpoint (AWS_ENDPOINT_URL_DYNAMODB, _SQS, _KMS, named as the AWS SDKs
   * name them), before {@link endpoint}: e.g. SQS and KMS on LocalStack with DynamoDB on moto.
   */
  serviceEndpoints: Partial<Record<AwsService, string>>;
  tableName: string;
  queueName: string;
  /** Known when deployed (SST link); resolved by name otherwise. */
  queueUrl: string | undefined;
  deadLetterQueueName: string;
  /** KMS key id, ARN or `alias/…`. */
  keyId: string;
  /** The alias the local bootstrap creates for the key. */
  keyAlias: string;
  /** The access-token signing key (asymmetric, ECC_NIST_P256): KMS key id, ARN or `alias/…`. */
  signingKeyId: string;
  /** The alias the local bootstrap creates for the signing key. */
  signingKeyAlias: string;
  /**
   * Credentials captured from the environment when the config was loaded (static keys, or the ECS
   * container-credentials endpoint), so they keep working after {@link removeCredentialsFromEnv};
   * undefined → the SDK's default chain.
   */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider | undefined;
}

type Env = Record<string, string | undefined>;

/** The AWS services the system uses, by the SDKs' endpoint names (`AWS_ENDPOINT_URL_<SERVICE>`). */
export const AWS_SERVICES = ["dynamodb", "sqs", "kms"] as const;
export type AwsService = (typeof AWS_SERVICES)[number];

/** Where `service` is reached: its own endpoint, else the common one; undefined on AWS. */
export function serviceEndpoint(config: AwsConfig, service: AwsService): string | undefined {
  return config.serviceEndpoints[service] ?? config.endpoint;
}

/** The links this module reads (names of `sst.Linkable`/`sst.Secret` in infra/). */
type LinkName = "Table" | "Jobs" | "Key" | "SigningKey" | "AdminToken" | "Runner" | "RunnerToken" | "Oidc";

/**
 * A linked SST resource's properties, when running deployed: the `SST_RESOURCE_<Name>` variable, else
 * (in a Lambda, where `SST_KEY_FILE` names the bundled, encrypted link file) what SST's SDK decrypts.
 */
function sstResource<Name extends LinkName>(env: Env, name: Name): Resource[Name] | undefined {
  const raw = env[`SST_RESOURCE_${name}`];
  if (raw) return JSON.parse(raw) as Resource[Name];
  return env.SST_KEY_FILE && name in Resource ? Resource[name] : undefined;
}

/** AWS resource names and endpoint, from SST links when deployed and from env/defaults locally. */
export function loadAwsConfig(env: Env = process.env): AwsConfig {
  const read = new EnvReader(env);
  const keyAlias = env.KMS_KEY_ALIAS ?? "alias/mcp-gateway";
  const signingKeyAlias = env.SIGNING_KEY_ALIAS ?? "alias/mcp-gateway-token-signing";
  const endpoint = read.url("AWS_ENDPOINT_URL");
  const serviceEndpoints: AwsConfig["serviceEndpoints"] = {};
  for (const service of AWS_SERVICES) {
    const own = read.url(`AWS_ENDPOINT_URL_${service.toUpperCase()}`);
    if (own) serviceEndpoints[service] = own;
  }
  read.check();
  return {
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
    endpoint,
    serviceEndpoints,
    tableName: sstResource(env, "Table")?.name ?? env.TABLE_NAME ?? "mcp-gateway",
    queueName: env.QUEUE_NAME ?? "mcp-gateway-jobs",
    queueUrl: sstResource(env, "Jobs")?.url,
    deadLetterQueueName: env.DEAD_LETTER_QUEUE_NAME ?? "mcp-gateway-jobs-dlq",
    keyId: sstResource(env, "Key")?.id ?? env.KMS_KEY_ID ?? keyAlias,
    keyAlias,
    signingKeyId: sstResource(env, "SigningKey")?.id ?? env.SIGNING_KEY_ID ?? signingKeyAlias,
    signingKeyAlias,
    credentials: credentialsFrom(env),
  };
}

/** The environment's AWS credentials, read now: static keys, or the container-credentials endpoint. */
function credentialsFrom(env: Env): AwsConfig["credentials"] {
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    return {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
  }
  const relative = env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI;
  const full = env.AWS_CONTAINER_CREDENTIALS_FULL_URI;
  if (!relative && !full) return undefined;
  return fromHttp({
    ...(relative ? { awsContainerCredentialsRelativeUri: relative } : {}),
    ...(full ? { awsContainerCredentialsFullUri: full } : {}),
    ...(env.AWS_CONTAINER_AUTHORIZATION_TOKEN
      ? { awsContainerAuthorizationToken: env.AWS_CONTAINER_AUTHORIZATION_TOKEN }
      : {}),
    ...(env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
      ? { awsContainerAuthorizationTokenFile: env.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE }
      : {}),
  });
}

/** Variables that carry a credential: the tokens, AWS keys and the container-credentials endpoint. */
export const CREDENTIAL_ENV_VARS = [
  "ADMIN_TOKEN",
  "RUNNER_TOKEN",
  "SST_RESOURCE_AdminToken",
  "SST_RESOURCE_RunnerToken",
  "OIDC_CLIENT_SECRET",
  "SST_RESOURCE_Oidc",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
  "AWS_CONTAINER_CREDENTIALS_FULL_URI",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN",
  "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
] as const;

/**
 * Removes every credential from the process environment, once settings and AWS config have been read
 * (they hold their own copies). What a process keeps in `process.env` is what anything it starts, or
 * anything that reads it later, could see.
 */
export function removeCredentialsFromEnv(env: Env = process.env): void {
  for (const name of CREDENTIAL_ENV_VARS) delete env[name];
}

/** Settings of the running system (not AWS resource names). */
export interface AppSettings {
  /** The admin bearer token (the API requires it; the worker does not use it). */
  adminToken: string | undefined;
  /** Allow upstreams on loopback/private addresses (on in `npm run dev`, off by default deployed). */
  allowPrivateUpstreams: boolean;
  /** Seconds between health sweeps. */
  sweepIntervalSeconds: number;
  /**
   * The stdio runner's URL and shared token, when there is one runner (RUNNER_URL); with RUNNER_FLEET,
   * a fleet of runners that register in the table (each instance at the runner holding its lease).
   */
  runner: { url: string; token: string } | { fleet: true; token: string } | undefined;
  /** Browser origins allowed on the MCP endpoints besides loopback ones. */
  mcpAllowedOrigins: string[];
  /** The lowest log level written (debug, info, warn, error). */
  logLevel: "debug" | "info" | "warn" | "error";
  /** The largest message an upstream may send: one HTTP body, one SSE event, one stdio line. */
  maxUpstreamMessageBytes: number;
  /** Every thread's worktreeRoot must lie strictly under this path (WORKTREE_BASE, default {@link worktreeBaseOf}). */
  worktreeBase: string;
  /** The gateway function's URL (GATEWAY_URL), where the admin function forwards the console's tool calls. */
  gatewayUrl: string | undefined;
  /**
   * The OAuth authorization server's issuer (OAUTH_ISSUER): the gateway's public origin, no trailing
   * slash. Unset: OAuth is off and the MCP endpoints take API keys only.
   */
  oauthIssuer: string | undefined;
  /** Serve the development sign-in page (OAUTH_DEV_SIGNIN; dev and tests only). */
  oauthDevSignIn: boolean;
  /**
   * The admin function's public URL (PUBLIC_ADMIN_URL), no trailing slash: upstream OAuth's redirect
   * URI (`/oauth/upstream/callback`) and client metadata document are under it.
   */
  publicAdminUrl: string | undefined;
  /** The OpenID Connect provider people sign in with (OIDC_*); undefined: the development sign-in only. */
  oidc: OidcSettings | undefined;
  /** Who may sign in to the console through the provider (CONSOLE_ADMIN_GROUP, CONSOLE_ADMINS). */
  consoleAdmins: ConsoleAdminSettings;
  /** Each caller's (key's, user's) limits on the data plane (CALLER_*); a key's own `rateLimit` goes first. */
  callerLimits: CallerLimitSettings;
  /** SEARCH_MODE_THRESHOLD: past this many tools in a caller's catalogue, `/mcp` lists in search mode (default 64). */
  searchModeThreshold: number;
  /** PINNING_DEFAULT: the pinning of servers that set none (`approve`, `auto` or `off`; default `approve`). */
  pinningDefault: Pinning;
  /**
   * The audit trail: AUDIT_SINK (`table`, default; `log`: a JSON line per event on stdout; `off`: none,
   * the proxy bench's baseline) and AUDIT_RETENTION_DAYS (default 30).
   */
  audit: { sink: "table" | "log" | "off"; retentionDays: number };
}

/** What one caller (a key, a user) may do on the data plane; the admin token is not limited. */
export interface CallerLimitSettings {
  /** CALLER_RATE_LIMIT: requests per minute. */
  perMinute: number;
  /** CALLER_RATE_BURST: requests at once after a pause (never more than perMinute). */
  burst: number;
  /** CALLER_MAX_CONCURRENT_CALLS: requests in flight at once (standing streams apart). */
  concurrent: number;
  /** CALLER_MAX_SESSIONS: open 2025-era MCP sessions (Mcp-Session-Id) per gateway process. */
  sessions: number;
  /** CALLER_MAX_STREAMS: standing streams (GET streams, subscriptions/listen) open at once per process. */
  streams: number;
}

/** The caller limits no ordinary client reaches: 100 requests a second sustained, 300 at once. */
export const DEFAULT_CALLER_LIMITS: CallerLimitSettings = {
  perMinute: 6_000,
  burst: 300,
  concurrent: 64,
  sessions: 100,
  streams: 50,
};

/** The OpenID provider and this gateway's client at it (a confidential client when it has a secret). */
export interface OidcSettings {
  /** OIDC_ISSUER: the provider's issuer URL exactly as its discovery document names it. */
  issuer: string;
  /** OIDC_CLIENT_ID. */
  clientId: string;
  /** OIDC_CLIENT_SECRET: never logged; absent for a public client (PKCE alone). */
  clientSecret: string | undefined;
  /** OIDC_GROUPS_CLAIM: the ID-token claim listing the user's groups (`groups`; Cognito: `cognito:groups`). */
  groupsClaim: string;
  /** OIDC_PROVIDER_NAME: what the sign-in button says ("Sign in with …"); default the issuer's host. */
  providerName: string;
  /**
   * OIDC_TOKEN_AUTH_METHOD: how the secret is sent to the token endpoint — `client_secret_basic` (the
   * default every OAuth server must support) or `client_secret_post` (for clients registered so).
   */
  tokenAuthMethod: (typeof TOKEN_AUTH_METHODS)[number];
}

/** The client authentication methods of a confidential client. */
export const TOKEN_AUTH_METHODS = ["client_secret_basic", "client_secret_post"] as const;

/** Console administrators by provider sign-in: members of `group`, and `users` (subs or verified emails). */
export interface ConsoleAdminSettings {
  group: string | undefined;
  users: string[];
}

/** Default of MAX_UPSTREAM_MESSAGE_BYTES: 16 MiB. */
export const DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/**
 * App settings from SST secrets when deployed, env locally. Every value is checked: a bad one throws
 * a ConfigError naming its variable (the process must not start with it).
 */
export function loadAppSettings(env: Env = process.env): AppSettings {
  const read = new EnvReader(env);
  const settings: AppSettings = {
    adminToken: sstResource(env, "AdminToken")?.value ?? read.string("ADMIN_TOKEN"),
    allowPrivateUpstreams: read.boolean("ALLOW_PRIVATE_UPSTREAMS", false),
    sweepIntervalSeconds: read.integer("SWEEP_INTERVAL_SECONDS", 60, { min: 1, max: 3_600 }),
    runner: runnerEndpoint(env, read),
    logLevel: read.oneOf("LOG_LEVEL", LOG_LEVELS, "info"),
    maxUpstreamMessageBytes: read.integer("MAX_UPSTREAM_MESSAGE_BYTES", DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES, {
      min: 1_024,
    }),
    mcpAllowedOrigins: read.origins("MCP_ALLOWED_ORIGINS"),
    worktreeBase: worktreeBaseOf(read),
    gatewayUrl: read.url("GATEWAY_URL"),
    oauthIssuer: read.url("OAUTH_ISSUER")?.replace(/\/+$/, ""),
    oauthDevSignIn: read.boolean("OAUTH_DEV_SIGNIN", false),
    publicAdminUrl: read.url("PUBLIC_ADMIN_URL")?.replace(/\/+$/, ""),
    oidc: oidcSettings(env, read),
    consoleAdmins: {
      group: read.string("CONSOLE_ADMIN_GROUP"),
      users: (read.string("CONSOLE_ADMINS") ?? "")
        .split(",")
        .map((user) => user.trim())
        .filter(Boolean),
    },
    callerLimits: {
      perMinute: read.integer("CALLER_RATE_LIMIT", DEFAULT_CALLER_LIMITS.perMinute, { min: 1 }),
      burst: read.integer("CALLER_RATE_BURST", DEFAULT_CALLER_LIMITS.burst, { min: 1 }),
      concurrent: read.integer("CALLER_MAX_CONCURRENT_CALLS", DEFAULT_CALLER_LIMITS.concurrent, { min: 1 }),
      sessions: read.integer("CALLER_MAX_SESSIONS", DEFAULT_CALLER_LIMITS.sessions, { min: 1 }),
      streams: read.integer("CALLER_MAX_STREAMS", DEFAULT_CALLER_LIMITS.streams, { min: 1 }),
    },
    searchModeThreshold: read.integer("SEARCH_MODE_THRESHOLD", 64, { min: 0 }),
    pinningDefault: read.oneOf("PINNING_DEFAULT", PINNING_MODES, "approve"),
    audit: {
      sink: read.oneOf("AUDIT_SINK", ["table", "log", "off"] as const, "table"),
      retentionDays: read.integer("AUDIT_RETENTION_DAYS", 30, { min: 1, max: 3_650 }),
    },
  };
  read.check();
  return settings;
}

/** A claim name: a plain name (`groups`, `cognito:groups`) or a namespaced URL claim. */
const CLAIM_NAME = /^[A-Za-z0-9:._/~-]{1,200}$/;

/**
 * The provider settings: the `Oidc` link deployed (SST), OIDC_* variables locally. The issuer must be
 * https (http only on a loopback host, for a provider on this machine); a client id is required with it.
 */
function oidcSettings(env: Env, read: EnvReader): OidcSettings | undefined {
  const linked = sstResource(env, "Oidc");
  const issuer = linked?.issuer || read.url("OIDC_ISSUER");
  const clientId = linked?.clientId || read.string("OIDC_CLIENT_ID");
  const clientSecret = linked?.clientSecret || read.string("OIDC_CLIENT_SECRET");
  const groupsClaim = linked?.groupsClaim || read.string("OIDC_GROUPS_CLAIM") || "groups";
  if (!CLAIM_NAME.test(groupsClaim)) read.fail("OIDC_GROUPS_CLAIM", "must be a claim name", groupsClaim, 0);
  if (!issuer) {
    if (clientId) read.fail("OIDC_ISSUER", "must be set with OIDC_CLIENT_ID", "", 0);
    return undefined;
  }
  const url = new URL(issuer);
  if (url.protocol !== "https:" && !isLoopbackHost(url.hostname)) {
    read.fail("OIDC_ISSUER", "must be https (http only on a loopback host)", issuer, 0);
  }
  if (url.search || url.hash) read.fail("OIDC_ISSUER", "must have no query or fragment", issuer, 0);
  if (!clientId) read.fail("OIDC_CLIENT_ID", "must be set with OIDC_ISSUER", "", 0);
  return {
    issuer,
    clientId: clientId ?? "",
    clientSecret,
    groupsClaim,
    providerName: linked?.providerName || read.string("OIDC_PROVIDER_NAME") || url.host,
    tokenAuthMethod: read.oneOf("OIDC_TOKEN_AUTH_METHOD", TOKEN_AUTH_METHODS, "client_secret_basic"),
  };
}

function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function runnerEndpoint(env: Env, read: EnvReader): AppSettings["runner"] {
  const fleet = read.boolean("RUNNER_FLEET", false);
  const url = fleet ? undefined : (sstResource(env, "Runner")?.url ?? read.url("RUNNER_URL"));
  const token = sstResource(env, "RunnerToken")?.value ?? read.string("RUNNER_TOKEN");
  if (fleet && !token) read.fail("RUNNER_FLEET", "needs RUNNER_TOKEN (the fleet's runner token)", "true", 0);
  if (!token) return undefined;
  if (fleet) return { fleet: true, token };
  return url ? { url, token } : undefined;
}

/** The stdio runner's own settings (its container env, or `npm run dev`). */
export interface RunnerSettings {
  /** The shared secret callers must present. */
  token: string | undefined;
  port: number;
  host: string;
  /** A shared npm/uv cache for children, so `npx`/`uvx` need not download on every spawn. */
  cacheDir: string | undefined;
  idleMs: number | undefined;
  maxChildren: number | undefined;
  /** Where the runner makes its own fresh temp directory (default: the OS temp dir). */
  tempBase: string | undefined;
  /** The first uid (and gid) of the pool children run as, and how many there are. */
  uidBase: number | undefined;
  uidCount: number | undefined;
  /** Thread worktrees must lie under this path, checked on disk (WORKTREE_BASE, default {@link worktreeBaseOf}). */
  worktreeBase: string;
  /** Uids per runner: each runner of the host holds its own slice of the range (RUNNER_UID_SLICE). */
  uidSlice: number | undefined;
  /**
   * The longest line a child may write to stdout (one JSON-RPC message): MAX_UPSTREAM_MESSAGE_BYTES,
   * and never more than the MCP SDK's own stdio bound of 10 MiB.
   */
  maxMessageBytes: number;
  /** The most of one child's replies the runner holds unsent (RUNNER_CHILD_REPLY_BUDGET_MIB, default 64 MiB). */
  childReplyBudgetBytes: number;
  /** Every child's limits unless its server sets its own (CHILD_CPU_SECONDS, CHILD_MEMORY_MIB, CHILD_MAX_PROCESSES; 0 is none). */
  childLimits: ResolvedLimits;
  /** How often children of servers that no longer exist are looked for: the sweep's interval (SWEEP_INTERVAL_SECONDS). */
  goneCheckMs: number;
  /**
   * RUNNER_FLEET: this runner joins the fleet in the table (registers, serves only instances it holds
   * the lease of); its face is reached at RUNNER_ADVERTISE_URL (default: the URL it listens on), a
   * registration lives RUNNER_LEASE_SECONDS (default 15) without a heartbeat, it takes no new instance
   * while its task's memory is at RUNNER_MEMORY_HIGH_PERCENT (default 85) of its limit, and on SIGTERM
   * it lets calls in flight end for up to RUNNER_DRAIN_SECONDS (default 10).
   */
  fleet:
    | { advertiseUrl: string | undefined; leaseMs: number; memoryHigh: number; drainMs: number }
    | undefined;
}

/** The MCP SDK's bound on one stdio message (its `STDIO_DEFAULT_MAX_BUFFER_SIZE`): 10 MiB. */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * WORKTREE_BASE, normalised; unset, `mcpgw-worktrees` under the runner's data dir (RUNNER_TEMP_DIR, else
 * the OS temp dir) — the same for the API and the runner when they share these variables.
 */
function worktreeBaseOf(read: EnvReader): string {
  const base = read.absolutePath("WORKTREE_BASE");
  return base === undefined ? defaultWorktreeBase(read.absolutePath("RUNNER_TEMP_DIR")) : posix.resolve(base);
}

/**
 * Runner settings from env (PORT, HOST, RUNNER_CACHE_DIR, RUNNER_IDLE_SECONDS, RUNNER_MAX_CHILDREN,
 * RUNNER_TEMP_DIR, RUNNER_UID_BASE, RUNNER_UID_COUNT, RUNNER_UID_SLICE, WORKTREE_BASE,
 * MAX_UPSTREAM_MESSAGE_BYTES, RUNNER_CHILD_REPLY_BUDGET_MIB, CHILD_CPU_SECONDS, CHILD_MEMORY_MIB,
 * CHILD_MAX_PROCESSES, RUNNER_FLEET, RUNNER_ADVERTISE_URL, RUNNER_LEASE_SECONDS,
 * RUNNER_MEMORY_HIGH_PERCENT, RUNNER_DRAIN_SECONDS).
 */
export function loadRunnerSettings(env: Env = process.env): RunnerSettings {
  const read = new EnvReader(env);
  const idleSeconds = read.integer("RUNNER_IDLE_SECONDS", undefined, { min: 1 });
  const settings: RunnerSettings = {
    token: sstResource(env, "RunnerToken")?.value ?? read.string("RUNNER_TOKEN"),
    port: read.integer("PORT", 8788, { max: 65_535 }),
    host: read.string("HOST") ?? "0.0.0.0",
    cacheDir: read.absolutePath("RUNNER_CACHE_DIR"),
    idleMs: idleSeconds === undefined ? undefined : idleSeconds * 1_000,
    maxChildren: read.integer("RUNNER_MAX_CHILDREN", undefined, { min: 1, max: 10_000 }),
    tempBase: read.absolutePath("RUNNER_TEMP_DIR"),
    uidBase: read.integer("RUNNER_UID_BASE", undefined, { min: 1_000, max: 2 ** 31 - 100_000 }),
    uidCount: read.integer("RUNNER_UID_COUNT", undefined, { min: 1, max: 100_000 }),
    worktreeBase: worktreeBaseOf(read),
    uidSlice: read.integer("RUNNER_UID_SLICE", undefined, { min: 1, max: 100_000 }),
    maxMessageBytes: Math.min(
      read.integer("MAX_UPSTREAM_MESSAGE_BYTES", DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES, { min: 1_024 }),
      MAX_STDIO_MESSAGE_BYTES,
    ),
    childReplyBudgetBytes:
      read.integer("RUNNER_CHILD_REPLY_BUDGET_MIB", 64, { min: 1, max: 1024 * 1024 }) * 1024 * 1024,
    childLimits: {
      cpuSeconds: read.integer("CHILD_CPU_SECONDS", DEFAULT_CHILD_LIMITS.cpuSeconds, { max: 30 * 24 * 3600 }),
      memoryMiB: read.integer("CHILD_MEMORY_MIB", DEFAULT_CHILD_LIMITS.memoryMiB, { max: 1024 * 1024 }),
      processes: read.integer("CHILD_MAX_PROCESSES", DEFAULT_CHILD_LIMITS.processes, { max: 65_536 }),
    },
    goneCheckMs: read.integer("SWEEP_INTERVAL_SECONDS", 60, { min: 1, max: 3_600 }) * 1_000,
    fleet: read.boolean("RUNNER_FLEET", false)
      ? {
          advertiseUrl: read.url("RUNNER_ADVERTISE_URL"),
          leaseMs: read.integer("RUNNER_LEASE_SECONDS", 15, { min: 1, max: 600 }) * 1_000,
          memoryHigh: read.integer("RUNNER_MEMORY_HIGH_PERCENT", 85, { min: 1, max: 100 }) / 100,
          drainMs: read.integer("RUNNER_DRAIN_SECONDS", 10, { max: 15 }) * 1_000,
        }
      : undefined,
  };
  read.check();
  return settings;
}
