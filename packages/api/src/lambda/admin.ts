/** Lambda entry of the admin function: the control plane. */
import { handle } from "hono/aws-lambda";
import { appFromEnvironment } from "./from-env";

export const handler = handle(appFromEnvironment({ admin: true, gateway: false }));
