export * from "./app";
export * from "./gateway/directory";
export * from "./gateway/service";
export * from "./problem";
export * from "./serve";
export * from "./views";
