/**
 * Lambda entry of the admin function: the control plane and the admin console (its built files are
 * copied beside the handler, `console/`; its bundle holds no data-plane module).
 */
import { join } from "node:path";
import { flushingLogs } from "@mcpgw/core";
import { handle } from "hono/aws-lambda";
import { createAdminApp } from "../admin-app";
import { loadConsoleAssets } from "../console/assets";
import { depsFromEnvironment } from "./from-env";

const consoleDir = join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), "console");

const deps = depsFromEnvironment();
const respond = handle(createAdminApp({ ...deps, console: loadConsoleAssets(consoleDir) }));
// The invocation's audit events are written before it returns (and its log lines after).
export const handler = flushingLogs(async (...args: Parameters<typeof respond>) => {
  try {
    return await respond(...args);
  } finally {
    await deps.audit.flush();
  }
});
