export * from "./emf";
export * from "./flush";
export * from "./http-spans";
export * from "./instruments";
export * from "./metrics";
export * from "./prometheus";
export * from "./testing";
export * from "./tracing";
