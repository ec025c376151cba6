/** Test stores on the emulator: each gets its own table, queues and names, so suites never collide. */
import { randomUUID } from "node:crypto";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsConfig, createAwsClients, createStore, ensureResources, loadAwsConfig } from "@mcpgw/aws";

/** A fresh, isolated set of AWS resources on the emulator. */
export async function createTestConfig(overrides: Partial<AwsConfig> = {}): Promise<AwsConfig> {
  const suffix = randomUUID().slice(0, 8);
  const config: AwsConfig = {
    ...loadAwsConfig(),
    tableName: `test-${suffix}`,
    queueName: `test-jobs-${suffix}`,
    deadLetterQueueName: `test-jobs-dlq-${suffix}`,
    ...overrides,
  };
  await ensureResources(createAwsClients(config), config);
  return config;
}

/** A store over fresh resources. */
export async function createTestStore(overrides: Partial<AwsConfig> = {}) {
  return createStore(await createTestConfig(overrides));
}

/** Every raw item in a table (for tests that inspect what is really stored). */
export async function scanTable(config: AwsConfig): Promise<Record<string, unknown>[]> {
  const { ddb } = createAwsClients(config);
  const { Items } = await ddb.send(new ScanCommand({ TableName: config.tableName, ConsistentRead: true }));
  return Items ?? [];
}
