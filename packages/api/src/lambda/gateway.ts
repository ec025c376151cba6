/**
 * Lambda entry of the gateway function: the data plane (warm sessions live across invocations; its
 * bundle holds no admin module). Its Function URL streams (infra/api.ts), so MCP answers as
 * Server-Sent Events arrive as they are written.
 */
import { startMetrics, startTracing } from "@mcpgw/telemetry";
import { AUDIT_INVOCATION_FLUSH_MS } from "../audit-writer";
import { createGatewayApp } from "../gateway-app";
import { depsFromEnvironment } from "./from-env";
import { streamingHandler } from "./stream";

startTracing({ service: "gateway" });
await startMetrics({ service: "gateway" });

const deps = depsFromEnvironment();
export const handler = streamingHandler(createGatewayApp(deps), async () =>
  deps.audit?.flushWithin(AUDIT_INVOCATION_FLUSH_MS),
);
