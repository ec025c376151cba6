export * from "./credential-port";
export * from "./probe-server";
export * from "./reach";
export * from "./verdict";
