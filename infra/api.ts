/**
 * The two Hono apps on Lambda Function URLs (Function URLs, unlike API Gateway HTTP APIs, can stream
 * responses): the admin function (control plane) and the gateway function (data plane, `/mcp`).
 * Both sit in the VPC to reach the stdio runner; each is linked only to what it uses.
 */

import { consoleAdminEnvironment, oidcLink } from "./auth";
import { NODE_OPTIONS, nodejs } from "./bundling";
import { consoleDist } from "./console";
import { inspectJobQueue, jobsLink } from "./queue";
import { fleetEnvironment, runnerLink, vpc } from "./runner";
import { concurrencyOf, metricsNamespace, stageSettings } from "./stages";
import {
  adminToken,
  describeKey,
  keyLink,
  runnerToken,
  sealUpstreamOauth,
  sealWithKey,
  signingKeyLink,
  tableLink,
} from "./storage";

/** This stage's settings (infra/stages.ts): the same on every deploy, whatever the deployer's shell holds. */
const settings = stageSettings($app.stage);
const tokenAuthMethod = typeof settings.signIn === "object" ? settings.signIn.tokenAuthMethod : undefined;

/**
 * Upstreams on loopback / private addresses are refused when deployed (one object per function);
 * the stage's `worktreeBase` bounds where thread worktrees may be (default /tmp/mcpgw-worktrees, the
 * runner's too).
 */
const environment = () => ({
  NODE_OPTIONS,
  ALLOW_PRIVATE_UPSTREAMS: "false",
  // Each stdio instance at the runner of the fleet holding its lease (looked up in the table).
  ...fleetEnvironment(),
  ...(settings.worktreeBase ? { WORKTREE_BASE: settings.worktreeBase } : {}),
  // Your own OpenID provider's client may be registered for client_secret_post (infra/auth.ts).
  ...(tokenAuthMethod ? { OIDC_TOKEN_AUTH_METHOD: tokenAuthMethod } : {}),
  // Where audit events go and how long the table keeps them (unset: the table, 30 days).
  ...(settings.audit?.sink ? { AUDIT_SINK: settings.audit.sink } : {}),
  ...(settings.audit?.retentionDays ? { AUDIT_RETENTION_DAYS: String(settings.audit.retentionDays) } : {}),
  METRICS_NAMESPACE: metricsNamespace($app.stage),
});

/**
 * `GET /readyz` (both functions) checks the table (a GetItem, already granted), the job queue and the
 * key: these two read-only grants are all it adds.
 */
const checkReadiness = [inspectJobQueue, describeKey];

/**
 * Data plane: tool lists and calls, `/mcp`. Opens sealed headers (kms:Decrypt through the Key link),
 * and seals only what upstream OAuth writes (a caller's authorization under way, refreshed and
 * client-credentials tokens: `sealUpstreamOauth`); keeps upstream sessions warm across invocations.
 * Its URL streams (RESPONSE_STREAM; the handler is `awslambda.streamifyResponse`d): MCP answers as SSE,
 * progress before a tool's result, long-lived listen/GET streams. The admin API stays buffered.
 */
export const gateway = new sst.aws.Function("Gateway", {
  handler: "packages/api/src/lambda/gateway.handler",
  runtime: "nodejs22.x",
  nodejs,
  architecture: "arm64",
  memory: "1024 MB",
  // A call may run for its server's timeoutSeconds (up to 900) and progress extends it to 15 min
  // (MAX_CALL_MS). 15 minutes is Lambda's maximum, and it bounds every stream: one still open then is
  // cut off, and a client that went away does not end it sooner (the runtime does not report it).
  timeout: "15 minutes",
  url: true,
  streaming: true,
  // SigningKey: the OAuth authorization server signs access tokens (when OAUTH_ISSUER is set);
  // Oidc: people sign in at the OpenID provider (infra/auth.ts).
  link: [tableLink, jobsLink, keyLink, signingKeyLink, adminToken, runnerLink, runnerToken, oidcLink],
  permissions: [...sealUpstreamOauth, ...checkReadiness],
  vpc,
  ...concurrencyOf(settings, "gateway"),
  // PUBLIC_ADMIN_URL: where a per-user upstream authorization comes back (the admin function's callback).
  environment: {
    ...environment(),
    ...(settings.oauthIssuer ? { OAUTH_ISSUER: settings.oauthIssuer } : {}),
    ...(settings.publicAdminUrl ? { PUBLIC_ADMIN_URL: settings.publicAdminUrl } : {}),
  },
});

/**
 * Control plane and admin console: writes server configs and secrets, so it is the one function that
 * seals under any context (kms:GenerateDataKey); enqueues jobs; stops thread-scoped runner instances.
 */
export const admin = new sst.aws.Function("Admin", {
  handler: "packages/api/src/lambda/admin.handler",
  runtime: "nodejs22.x",
  nodejs,
  architecture: "arm64",
  memory: "512 MB",
  // Starting a thread instance waits on the runner spawning it (a first `npx` run downloads): 90 s.
  timeout: "2 minutes",
  url: true,
  // Oidc: console admins may sign in at the OpenID provider (with PUBLIC_ADMIN_URL set).
  link: [tableLink, jobsLink, keyLink, adminToken, runnerLink, runnerToken, oidcLink],
  permissions: [sealWithKey, ...checkReadiness],
  vpc,
  ...concurrencyOf(settings, "admin"),
  // The console's "try it" is forwarded to the gateway function (same origin for the browser).
  // PUBLIC_ADMIN_URL (its own URL, or the domain in front of it): upstream OAuth's redirect URI.
  environment: {
    ...environment(),
    GATEWAY_URL: gateway.url,
    ...(settings.publicAdminUrl ? { PUBLIC_ADMIN_URL: settings.publicAdminUrl } : {}),
    ...consoleAdminEnvironment(),
  },
  // The admin console's static files (built by infra/console.ts), served at `/`.
  copyFiles: [{ from: consoleDist, to: "console" }],
});
