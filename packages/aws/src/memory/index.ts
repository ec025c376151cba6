/**
 * The in-memory store: a second implementation of the {@link Store} port, with the DynamoDB, SQS and
 * KMS wiring's semantics where behaviour depends on them, and nothing to reach over a network. For
 * unit tests only (`@mcpgw/aws/memory`; production code imports `@mcpgw/aws` and never this).
 */
import { createOutageLog } from "../outages";
import type { Sealer } from "../sealing";
import type { Store } from "../store";
import { createMemoryAuditStore } from "./audit";
import { createMemoryChangeFeed } from "./changes";
import { createMemoryChatToggles } from "./chats";
import { createMemoryConsoleSessionStore } from "./console-sessions";
import { createMemoryRunnerFleet } from "./fleet";
import { createMemoryJobQueue, type MemoryJobQueue } from "./jobs";
import { createMemoryApiKeyStore } from "./keys";
import { createMemoryLatencyHistory } from "./latency";
import { createMemoryOAuthStore } from "./oauth";
import { createMemoryRateBudget } from "./rate-budget";
import { createMemorySealer } from "./sealer";
import { createMemorySecretStore } from "./secrets";
import { createMemoryServerRepository } from "./servers";
import { createMemoryStatusRepository } from "./statuses";
import { createMemorySweepRuns } from "./sweep-runs";
import { createMemoryTables } from "./tables";
import { createMemoryThreadRegistry } from "./threads";
import { createMemoryToolsetStore } from "./toolsets";
import { createMemoryUpstreamCredentialStore } from "./upstream-credentials";

export { createMemoryRunnerFleet } from "./fleet";
export { createMemoryJobQueue, type MemoryJobQueue, type QueuedJob } from "./jobs";
export { createMemorySealer } from "./sealer";

/** A {@link Store} in memory; its queue shows what was sent, and its sealer needs no KMS. */
export interface MemoryStore extends Store {
  jobs: MemoryJobQueue;
  sealer: Sealer;
}

export function createMemoryStore(options: { jobs?: MemoryJobQueue } = {}): MemoryStore {
  const tables = createMemoryTables();
  const sealer = createMemorySealer();
  const servers = createMemoryServerRepository(tables, sealer);
  const statuses = createMemoryStatusRepository(tables);
  return {
    sealer,
    servers,
    statuses,
    changes: createMemoryChangeFeed(tables, servers, statuses),
    chats: createMemoryChatToggles(tables),
    latency: createMemoryLatencyHistory(tables),
    threads: createMemoryThreadRegistry(tables),
    keys: createMemoryApiKeyStore(tables),
    toolsets: createMemoryToolsetStore(),
    consoleSessions: createMemoryConsoleSessionStore(),
    secrets: createMemorySecretStore(tables, sealer),
    oauth: createMemoryOAuthStore(),
    upstreamCredentials: createMemoryUpstreamCredentialStore(tables, sealer),
    jobs: options.jobs ?? createMemoryJobQueue(),
    rateBudget: createMemoryRateBudget(),
    fleet: createMemoryRunnerFleet(),
    sweeps: createMemorySweepRuns(),
    outages: createOutageLog({
      tableName: "memory",
      queueName: "memory-jobs",
      queueUrl: undefined,
      keyId: "memory",
    }),
    audit: createMemoryAuditStore(),
    resources: { check: async () => ({ table: "ok", queue: "ok", key: "ok" }) },
  };
}
