import { createStore, loadAppSettings } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { type AppDeps, createApp } from "../app";

/** The app for one Lambda function, configured from SST links / env. */
export function appFromEnvironment(serve: AppDeps["serve"]) {
  const settings = loadAppSettings();
  if (!settings.adminToken) throw new Error("Missing the admin token (SST secret AdminToken or ADMIN_TOKEN)");
  return createApp({
    store: createStore(),
    logger: createLogger({ level: settings.logLevel }),
    adminToken: settings.adminToken,
    allowPrivateUpstreams: settings.allowPrivateUpstreams,
    runner: settings.runner,
    worktreeBase: settings.worktreeBase,
    mcp: { allowedOrigins: settings.mcpAllowedOrigins },
    maxUpstreamMessageBytes: settings.maxUpstreamMessageBytes,
    serve,
  });
}
