export * from "./emf";
export * from "./instruments";
export * from "./metrics";
export * from "./prometheus";
export * from "./testing";
