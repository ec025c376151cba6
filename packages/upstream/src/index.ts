export * from "./failure";
export * from "./guard";
export * from "./probe";
export * from "./session";
