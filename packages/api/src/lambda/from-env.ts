import { createKmsTokenSigner, createStore, loadAppSettings } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { runnerRoute } from "@mcpgw/upstream";
import type { AppDeps } from "../app-base";
import { type AuditWriter, createAuditWriter } from "../audit-writer";
import { OidcClient } from "../oidc/provider";

/**
 * What a Lambda function's app is made of, configured from SST links / env; its audit writer is
 * flushed before each invocation returns (the function is frozen between them).
 */
export function depsFromEnvironment(): AppDeps & { audit: AuditWriter | undefined } {
  const settings = loadAppSettings();
  if (!settings.adminToken) throw new Error("Missing the admin token (SST secret AdminToken or ADMIN_TOKEN)");
  const store = createStore();
  const logger = createLogger({ level: settings.logLevel });
  return {
    store,
    logger,
    audit: createAuditWriter(store, logger, settings.audit),
    auditRetentionDays: settings.audit.retentionDays,
    adminToken: settings.adminToken,
    allowPrivateUpstreams: settings.allowPrivateUpstreams,
    pinningDefault: settings.pinningDefault,
    runner: runnerRoute(settings.runner, store.fleet),
    worktreeBase: settings.worktreeBase,
    mcp: { allowedOrigins: settings.mcpAllowedOrigins },
    maxUpstreamMessageBytes: settings.maxUpstreamMessageBytes,
    gatewayUrl: settings.gatewayUrl,
    publicAdminUrl: settings.publicAdminUrl,
    // OAuth is on when OAUTH_ISSUER is set: tokens signed by the linked KMS key (SigningKey).
    oauth: settings.oauthIssuer
      ? {
          issuer: settings.oauthIssuer,
          signer: createKmsTokenSigner(store.clients.kms, store.config.signingKeyId),
          devSignIn: settings.oauthDevSignIn,
        }
      : undefined,
    oidc: settings.oidc ? new OidcClient(settings.oidc) : undefined,
    consoleAdmins: settings.consoleAdmins,
    limits: settings.callerLimits,
    // No watch of warm sessions on Lambda (session-watch.ts): a frozen instance would report outages.
    gateway: { searchModeThreshold: settings.searchModeThreshold, sessionCheckMs: 0 },
  };
}
