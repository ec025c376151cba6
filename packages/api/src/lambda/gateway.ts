/**
 * Lambda entry of the gateway function: the data plane (warm sessions live across invocations). Its
 * Function URL streams (infra/api.ts), so MCP answers as Server-Sent Events arrive as they are written.
 */
import { appFromEnvironment } from "./from-env";
import { streamingHandler } from "./stream";

export const handler = streamingHandler(appFromEnvironment({ admin: false, gateway: true }));
