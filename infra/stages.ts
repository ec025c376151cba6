/**
 * Per-stage deploy settings, kept in the project: every deploy of a stage deploys the same, from any
 * shell (infra/ reads none of these from the deployer's environment). Secrets are not here: they are
 * `npx sst secret set … --stage <stage>` (AdminToken, RunnerToken, OidcClientSecret).
 * Pure (no SST globals), so the checks run before anything is built.
 */

/** The one production stage: `npx sst deploy --stage production`. */
export const PRODUCTION_STAGE = "production";

/**
 * Production is retained on removal and protected: table and user-pool deletion protection, a 30-day
 * key deletion window, managed NAT gateways, no `npm run dev` callbacks in its user pool.
 */
export const isProduction = (stage: string): boolean => stage === PRODUCTION_STAGE;

/** Your own OpenID provider instead of the stage's Cognito pool (its secret: `OidcClientSecret`). */
export interface OwnProvider {
  issuer: string;
  clientId: string;
  /** The ID-token claim listing groups (default `groups`). */
  groupsClaim?: string;
  /** The console's "Sign in with …" (default: the issuer's host). */
  providerName?: string;
  /** How the client secret reaches the token endpoint (default `client_secret_basic`). */
  tokenAuthMethod?: "client_secret_basic" | "client_secret_post";
}

/** What may differ between stages. Every field is optional; unset means the default named. */
export interface StageSettings {
  /** The gateway's public origin, the OAuth issuer (OAUTH_ISSUER). Unset: MCP clients use keys only. */
  oauthIssuer?: string;
  /** The admin function's public origin (PUBLIC_ADMIN_URL): console sign-in and upstream OAuth return here. */
  publicAdminUrl?: string;
  /** Who signs in: the stage's Cognito pool (default), your own provider, or nobody (`"off"`). */
  signIn?: "cognito" | "off" | OwnProvider;
  /** CONSOLE_ADMIN_GROUP (with Cognito, default `gateway-admins`). */
  consoleAdminGroup?: string;
  /** CONSOLE_ADMINS: comma-separated emails or subjects allowed in the console. */
  consoleAdmins?: string;
  /** WORKTREE_BASE of the functions and the runner (default /tmp/mcpgw-worktrees). */
  worktreeBase?: string;
  /** Reserved concurrency per function: its ceiling and its guaranteed share (unset: none). */
  reservedConcurrency?: { admin?: number; gateway?: number; worker?: number };
  /**
   * The audit trail of the API functions: AUDIT_SINK (`table`, default; `log`: one JSON line per event
   * in the functions' CloudWatch Logs, for a subscription to Firehose → S3) and AUDIT_RETENTION_DAYS
   * (the table's TTL, default 30).
   */
  audit?: { sink?: "table" | "log" | "off"; retentionDays?: number };
  /**
   * The stdio runners: a fleet of `min` to `max` tasks (default 2 to 6), scaled on CPU, memory and
   * children per task (`childrenPerTask`, default 35: 70 % of a task's 50); each instance at the task
   * holding its lease (RUNNER_FLEET), a dead task's instances started on the others.
   */
  runners?: { min?: number; max?: number; childrenPerTask?: number };
}

/**
 * The stages' settings; a stage not named here gets none (a Cognito pool that accepts `npm run dev`'s
 * callbacks). Production signs people in, so it needs both public URLs: your domains, or the function
 * URLs (the `gateway` and `admin` outputs) of a first deploy with `signIn: "off"`.
 */
export const STAGES: Record<string, StageSettings> = {
  [PRODUCTION_STAGE]: {},
};

/** Where `npm run dev` serves by default (scripts/dev.ts: http://127.0.0.1:$PORT, PORT 8787). */
export const DEV_ORIGIN = "http://127.0.0.1:8787";

/** The provider callbacks the routes serve, by the origin that serves them. */
export const CALLBACK_PATHS = {
  gateway: ["/oauth/oidc/callback"],
  admin: ["/console/oidc/callback", "/oauth/upstream/signin"],
};

/** `stage`'s settings, URLs without a trailing slash; throws a sentence naming what is missing or wrong. */
export function stageSettings(stage: string): StageSettings {
  const settings = { ...STAGES[stage] };
  const where = `for stage "${stage}" in infra/stages.ts`;
  for (const field of ["oauthIssuer", "publicAdminUrl"] as const) {
    const value = settings[field];
    if (value === undefined) continue;
    if (!/^https:\/\/[^/?#\s]+\/*$/.test(value)) {
      throw new Error(`${field} ${where} must be an https origin (got "${value}").`);
    }
    settings[field] = value.replace(/\/+$/, "");
  }
  const missing = (["oauthIssuer", "publicAdminUrl"] as const).filter((field) => !settings[field]);
  if (isProduction(stage) && settings.signIn !== "off" && missing.length > 0) {
    throw new Error(
      `Production signs people in, so its provider needs callback URLs: set ${missing.join(" and ")} ${where} ` +
        `(your domains, or the gateway and admin outputs of a first deploy with signIn: "off").`,
    );
  }
  return settings;
}

/** Where the provider may send the browser back: the public URLs' callbacks, and outside production npm run dev's. */
export function callbackUrls(stage: string, settings: StageSettings): string[] {
  const on = (origin: string | undefined, paths: string[]) =>
    origin ? paths.map((p) => `${origin}${p}`) : [];
  return [
    ...on(settings.oauthIssuer, CALLBACK_PATHS.gateway),
    ...on(settings.publicAdminUrl, CALLBACK_PATHS.admin),
    ...(isProduction(stage) ? [] : on(DEV_ORIGIN, [...CALLBACK_PATHS.gateway, ...CALLBACK_PATHS.admin])),
  ];
}

/** The most children one runner task runs (RUNNER_MAX_CHILDREN's default). */
export const RUNNER_TASK_CHILDREN = 50;

/**
 * The runner fleet's bounds and its target of children per task (see {@link StageSettings.runners}),
 * checked: 1 ≤ min ≤ max ≤ 100, 1 ≤ childrenPerTask ≤ a task's most.
 */
export function runnerScaling(settings: StageSettings): {
  min: number;
  max: number;
  childrenPerTask: number;
} {
  const min = settings.runners?.min ?? 2;
  const max = settings.runners?.max ?? Math.max(6, min);
  const childrenPerTask = settings.runners?.childrenPerTask ?? Math.round(RUNNER_TASK_CHILDREN * 0.7);
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min || max > 100)
    throw new Error(
      `runners in infra/stages.ts must have whole numbers 1 ≤ min ≤ max ≤ 100 (got ${min}, ${max}).`,
    );
  if (!Number.isInteger(childrenPerTask) || childrenPerTask < 1 || childrenPerTask > RUNNER_TASK_CHILDREN)
    throw new Error(
      `runners.childrenPerTask in infra/stages.ts must be a whole number from 1 to ${RUNNER_TASK_CHILDREN} (got ${childrenPerTask}).`,
    );
  return { min, max, childrenPerTask };
}

/**
 * The CloudWatch namespace of this stage's metrics (METRICS_NAMESPACE of every function and the runner):
 * the stages of one account never mix, and the runners' scaling reads only its own.
 */
export const metricsNamespace = (stage: string): string => `MCPGateway/${stage}`;

/** One function's SST `concurrency` option: reserved when the stage sets it, else none (spread it in). */
export function concurrencyOf(
  settings: StageSettings,
  name: keyof NonNullable<StageSettings["reservedConcurrency"]>,
): { concurrency?: { reserved: number } } {
  const reserved = settings.reservedConcurrency?.[name];
  return reserved === undefined ? {} : { concurrency: { reserved } };
}
