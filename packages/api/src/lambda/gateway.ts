/** Lambda entry of the gateway function: the data plane (warm sessions live across invocations). */
import { handle } from "hono/aws-lambda";
import { appFromEnvironment } from "./from-env";

export const handler = handle(appFromEnvironment({ admin: false, gateway: true }));
