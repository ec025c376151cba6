import { createChatToggles } from "./chats";
import { createAwsClients } from "./clients";
import { type AwsConfig, loadAwsConfig } from "./config";
import { createJobQueue } from "./jobs";
import { createApiKeyStore } from "./keys";
import { createOutageLog } from "./outages";
import { createKmsSealer } from "./sealing";
import { createSecretStore } from "./secrets";
import { createServerRepository } from "./servers";
import { createStatusRepository } from "./statuses";
import { createThreadRegistry } from "./threads";

/**
 * Every adapter, wired to one set of clients; what handlers and workers are built from. `outages` is
 * shared by all who use the store, so a missing resource is logged once per interval in all.
 */
export function createStore(
  config: AwsConfig = loadAwsConfig(),
  options: { outageLogIntervalMs?: number } = {},
) {
  const clients = createAwsClients(config);
  const sealer = createKmsSealer(clients.kms, config.keyId);
  return {
    config,
    clients,
    sealer,
    servers: createServerRepository(clients.ddb, config.tableName, sealer),
    statuses: createStatusRepository(clients.ddb, config.tableName),
    chats: createChatToggles(clients.ddb, config.tableName),
    threads: createThreadRegistry(clients.ddb, config.tableName),
    keys: createApiKeyStore(clients.ddb, config.tableName),
    secrets: createSecretStore(clients.ddb, config.tableName, sealer),
    jobs: createJobQueue(clients.sqs, { queueName: config.queueName, queueUrl: config.queueUrl }),
    outages: createOutageLog(config, options.outageLogIntervalMs),
  };
}

export type Store = ReturnType<typeof createStore>;
