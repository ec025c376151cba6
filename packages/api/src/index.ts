export * from "./app";
export { KEY_CACHE_MS } from "./auth";
export * from "./gateway/directory";
export * from "./gateway/service";
export * from "./health";
export * from "./problem";
export * from "./serve";
export * from "./views";
