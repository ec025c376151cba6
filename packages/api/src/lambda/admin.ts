/**
 * Lambda entry of the admin function: the control plane and the admin console (its built files are
 * copied beside the handler, `console/`; its bundle holds no data-plane module).
 */
import { join } from "node:path";
import { flushingLogs } from "@mcpgw/core";
import { flushTelemetry, startMetrics, startTracing } from "@mcpgw/telemetry";
import { handle } from "hono/aws-lambda";
import { createAdminApp } from "../admin-app";
import { AUDIT_INVOCATION_FLUSH_MS } from "../audit-writer";
import { loadConsoleAssets } from "../console/assets";
import { depsFromEnvironment } from "./from-env";

const consoleDir = join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), "console");

startTracing({ service: "admin" });
await startMetrics({ service: "admin" });

const deps = depsFromEnvironment();
// The invocation's audit events are written before it returns (for a short while at most: the rest
// go with the next invocation's), with its spans and metrics.
export const handler = flushingLogs(
  handle(createAdminApp({ ...deps, console: loadConsoleAssets(consoleDir) })),
  async () => {
    await Promise.all([deps.audit?.flushWithin(AUDIT_INVOCATION_FLUSH_MS), flushTelemetry()]);
  },
);
