/** Lambda entry: the same app as `npm run dev`, configured from SST links / env. */
import { createStore, loadAppSettings } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { handle } from "hono/aws-lambda";
import { createApp } from "./app";

const settings = loadAppSettings();
const app = createApp({
  store: createStore(),
  logger: createLogger(),
  adminToken: settings.adminToken,
  allowPrivateUpstreams: settings.allowPrivateUpstreams,
});

export const handler = handle(app);
