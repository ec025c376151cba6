/** The data plane's names as `mcp-server.ts` imports them (each lives in the module of its concern). */
export { AuthorizationNeeded, authorizationNeededResult } from "./authorization-needed";
export { callGatewayTool, forwardToServer } from "./call";
export { type CatalogTool, inScope, listTools, type ServerScope } from "./catalogue";
export type { GatewayDeps } from "./deps";
export { isThreadScoped } from "./thread-access";
