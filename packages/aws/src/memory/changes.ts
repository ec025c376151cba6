import { randomUUID } from "node:crypto";
import type { ChangeFeed } from "../changes";
import type { ServerRepository } from "../servers";
import type { StatusRepository } from "../statuses";
import type { MemoryTables } from "./tables";

/** The change feed in memory: the stamps the tables' writes leave, read back through the repositories. */
export function createMemoryChangeFeed(
  tables: MemoryTables,
  servers: ServerRepository,
  statuses: StatusRepository,
): ChangeFeed {
  // Made as if by the bootstrap: with its epoch, for good.
  const epoch = randomUUID();
  return {
    async since(sinceMs) {
      const changes = [...tables.changed].flatMap(([serverId, items]) =>
        [...items]
          .filter(([, at]) => at >= sinceMs)
          .map(([item, at]) => ({ serverId, item, at, ...(item === "GONE" ? { gone: true as const } : {}) })),
      );
      return { changes, epoch };
    },

    async ensureEpoch() {},

    async read(serverIds) {
      return Promise.all(
        serverIds.map(async (serverId) => {
          const server = await servers.getPlain(serverId);
          if (!server) return { serverId };
          const [status, catalog] = await Promise.all([
            statuses.get(serverId),
            statuses.getCatalog(serverId),
          ]);
          return { serverId, server, ...(status ? { status } : {}), ...(catalog ? { catalog } : {}) };
        }),
      );
    },
  };
}
