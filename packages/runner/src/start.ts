import { mkdir } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@mcpgw/aws";
import type { Logger } from "@mcpgw/core";
import { createRunnerServer } from "./http";
import { InstanceManager, type InstanceManagerOptions } from "./instances";

export interface RunnerOptions extends Partial<Omit<InstanceManagerOptions, "store" | "logger">> {
  store: Store;
  logger: Logger;
  token: string;
  port?: number;
  host?: string;
}

/** A running stdio runner. */
export interface Runner {
  url: string;
  /** The token requests to the runner must carry. */
  token: string;
  instances: InstanceManager;
  stop(): Promise<void>;
}

/** Starts the runner's HTTP face on `host:port` (127.0.0.1:0 by default). */
export async function startRunner(options: RunnerOptions): Promise<Runner> {
  const tempRoot = options.tempRoot ?? join(tmpdir(), "mcpgw-runner");
  await mkdir(tempRoot, { recursive: true, mode: 0o700 });
  const instances = new InstanceManager({
    ...options,
    tempRoot,
    runnerEnv: options.runnerEnv ?? process.env,
  });
  const server = createRunnerServer({ instances, logger: options.logger, token: options.token });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    token: options.token,
    instances,
    async stop() {
      await instances.shutdown();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
