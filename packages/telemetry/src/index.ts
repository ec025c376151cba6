export * from "./http-spans";
export * from "./tracing";
