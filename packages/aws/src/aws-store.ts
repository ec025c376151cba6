import { createAuditStore } from "./audit";
import { createChangeFeed } from "./changes";
import { createChatToggles } from "./chats";
import { type AwsClients, createAwsClients } from "./clients";
import { type AwsConfig, loadAwsConfig } from "./config";
import { createConsoleSessionStore } from "./console-sessions";
import { createRunnerFleet } from "./fleet";
import { createJobQueue, type SqsJobQueue } from "./jobs";
import { createApiKeyStore } from "./keys";
import { createLatencyHistory } from "./latency";
import { createOAuthStore } from "./oauth";
import { createOutageLog } from "./outages";
import { createRateBudget } from "./rate-budget";
import { checkResources } from "./readiness";
import { createKmsSealer, type Sealer } from "./sealing";
import { createSecretStore } from "./secrets";
import { createServerRepository } from "./servers";
import { createStatusRepository } from "./statuses";
import type { Store } from "./store";
import { createSweepRuns } from "./sweep-runs";
import { createThreadRegistry } from "./threads";
import { createToolsetStore } from "./toolsets";
import { createUpstreamCredentialStore } from "./upstream-credentials";

/**
 * The store on AWS, plus what only the AWS wiring uses: the config (resource names), the clients (the
 * local bootstrap; integration tests that look at raw items) and the sealer; its queue resolves a URL.
 */
export interface AwsStore extends Store {
  config: AwsConfig;
  clients: AwsClients;
  sealer: Sealer;
  jobs: SqsJobQueue;
}

/**
 * Every adapter, wired to one set of clients; what handlers and workers are built from. `outages` is
 * shared by all who use the store, so a missing resource is logged once per interval in all.
 */
export function createStore(
  config: AwsConfig = loadAwsConfig(),
  options: { outageLogIntervalMs?: number } = {},
): AwsStore {
  const clients = createAwsClients(config);
  const sealer = createKmsSealer(clients.kms, config.keyId);
  const jobs = createJobQueue(clients.sqs, { queueName: config.queueName, queueUrl: config.queueUrl });
  return {
    config,
    clients,
    sealer,
    servers: createServerRepository(clients.ddb, config.tableName, sealer),
    statuses: createStatusRepository(clients.ddb, config.tableName),
    changes: createChangeFeed(clients.ddb, config.tableName),
    chats: createChatToggles(clients.ddb, config.tableName),
    latency: createLatencyHistory(clients.ddb, config.tableName),
    threads: createThreadRegistry(clients.ddb, config.tableName),
    keys: createApiKeyStore(clients.ddb, config.tableName),
    toolsets: createToolsetStore(clients.ddb, config.tableName),
    consoleSessions: createConsoleSessionStore(clients.ddb, config.tableName),
    secrets: createSecretStore(clients.ddb, config.tableName, sealer),
    oauth: createOAuthStore(clients.ddb, config.tableName),
    upstreamCredentials: createUpstreamCredentialStore(clients.ddb, config.tableName, sealer),
    jobs,
    rateBudget: createRateBudget(clients.ddb, config.tableName),
    fleet: createRunnerFleet(clients.ddb, config.tableName),
    sweeps: createSweepRuns(clients.ddb, config.tableName),
    outages: createOutageLog(config, options.outageLogIntervalMs),
    audit: createAuditStore(clients.ddb, config.tableName),
    resources: { check: (timeoutMs) => checkResources({ clients, config, jobs }, timeoutMs) },
  };
}
