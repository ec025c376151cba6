export * from "./bridge";
export * from "./child-transport";
export * from "./face";
export * from "./http";
export * from "./instances";
export * from "./isolation";
export * from "./probe-relay";
export * from "./start";
