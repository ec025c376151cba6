export * from "./app";
export * from "./problem";
export * from "./serve";
export * from "./views";
