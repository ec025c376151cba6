/** An in-process admin app over fresh emulator resources, with every log line captured. */
import { createApp, loadConsoleAssets } from "@mcpgw/api";
import { createLogger } from "@mcpgw/core";
import { CONSOLE_DIST } from "../../scripts/lib/console";
import { createTestStore } from "./aws";

export const TEST_ADMIN_TOKEN = "test-admin-token-5d1e";

export async function createTestApp(
  options: {
    allowPrivateUpstreams?: boolean;
    worktreeBase?: string;
    console?: boolean;
    /** Another admin token than TEST_ADMIN_TOKEN (a rotation). */
    adminToken?: string;
    /** Another app's store: a second instance (or a restart) over the same table. */
    store?: Awaited<ReturnType<typeof createTestStore>>;
  } = {},
) {
  const store = options.store ?? (await createTestStore());
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", sink: (line) => logs.push(line) });
  const app = createApp({
    store,
    logger,
    adminToken: options.adminToken ?? TEST_ADMIN_TOKEN,
    allowPrivateUpstreams: options.allowPrivateUpstreams ?? true,
    ...(options.worktreeBase === undefined ? {} : { worktreeBase: options.worktreeBase }),
    ...(options.console ? { console: loadConsoleAssets(CONSOLE_DIST) } : {}),
  });
  /** A request with the admin token and a JSON body. */
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  return { app, store, logs, logger, call };
}
