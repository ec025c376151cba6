export * from "./guard";
