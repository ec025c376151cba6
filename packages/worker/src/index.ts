export { type AttemptDeps, attemptConnection, OUTER_GRACE_MS } from "@mcpgw/upstream";
export * from "./deps";
export * from "./handler";
export * from "./poller";
export * from "./process-job";
export * from "./sweep";
export * from "./sweep-timer";
