export * from "./call";
export * from "./failure";
export * from "./guard";
export * from "./pool";
export * from "./probe";
export * from "./runner-client";
export * from "./session";
export * from "./target";
