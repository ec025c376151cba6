export * from "./attempt";
export * from "./deps";
export * from "./handler";
export * from "./poller";
export * from "./process-job";
export * from "./sweep";
export * from "./sweep-timer";
