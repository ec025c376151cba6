/** Lambda entry of the admin function: the control plane. */
import { flushingLogs } from "@mcpgw/core";
import { handle } from "hono/aws-lambda";
import { appFromEnvironment } from "./from-env";

export const handler = flushingLogs(handle(appFromEnvironment({ admin: true, gateway: false })));
