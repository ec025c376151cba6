export * from "./child-transport";
export * from "./face";
export * from "./http";
export * from "./instances";
export * from "./isolation";
export * from "./start";
