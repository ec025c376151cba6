/** Lambda entry of the admin function: the control plane (its bundle holds no data-plane module). */
import { flushingLogs } from "@mcpgw/core";
import { handle } from "hono/aws-lambda";
import { createAdminApp } from "../admin-app";
import { depsFromEnvironment } from "./from-env";

export const handler = flushingLogs(handle(createAdminApp(depsFromEnvironment())));
