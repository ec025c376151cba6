/** Test stores on the emulator: each gets its own table, queues and names, so suites never collide. */
import { randomUUID } from "node:crypto";
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import {
  CancelKeyDeletionCommand,
  DescribeKeyCommand,
  EnableKeyCommand,
  ScheduleKeyDeletionCommand,
} from "@aws-sdk/client-kms";
import { DeleteQueueCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { InitializeMiddleware, MetadataBearer, MiddlewareStack } from "@aws-sdk/types";
import {
  type AwsConfig,
  createAwsClients,
  createStore,
  type Dependency,
  ensureResources,
  loadAwsConfig,
} from "@mcpgw/aws";
import { EMULATOR_ENV } from "../../scripts/lib/emulator";

/**
 * The region and access key of the run's emulator (which requires its own key), for a process a test
 * starts with an environment of its own.
 */
export function emulatorEnv(): Record<string, string> {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } = process.env;
  return {
    ...EMULATOR_ENV,
    ...(AWS_ACCESS_KEY_ID && AWS_SECRET_ACCESS_KEY ? { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } : {}),
  };
}

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

/** Fresh resources with a KMS key of their own (its alias too), for tests that take the key away. */
export function createTestConfigWithOwnKey(overrides: Partial<AwsConfig> = {}): Promise<AwsConfig> {
  const keyAlias = `alias/test-${randomUUID().slice(0, 8)}`;
  return createTestConfig({ keyAlias, keyId: keyAlias, ...overrides });
}

/**
 * Takes one resource away as an emulator that lost it would: the table or the job queue deleted, the
 * key scheduled for deletion (its own key: see {@link createTestConfigWithOwnKey}).
 */
export async function removeResource(config: AwsConfig, dependency: Dependency): Promise<void> {
  const { ddb, sqs, kms } = createAwsClients(config);
  if (dependency === "table") {
    await ddb.send(new DeleteTableCommand({ TableName: config.tableName }));
  } else if (dependency === "queue") {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: config.queueName }));
    await sqs.send(new DeleteQueueCommand({ QueueUrl }));
  } else {
    const { KeyMetadata } = await kms.send(new DescribeKeyCommand({ KeyId: config.keyId }));
    await kms.send(new ScheduleKeyDeletionCommand({ KeyId: KeyMetadata?.KeyId, PendingWindowInDays: 7 }));
  }
}

/** Brings back what {@link removeResource} took: the bootstrap again; the key's deletion cancelled. */
export async function restoreResource(config: AwsConfig, dependency: Dependency): Promise<void> {
  const clients = createAwsClients(config);
  if (dependency === "key") {
    const { KeyMetadata } = await clients.kms.send(new DescribeKeyCommand({ KeyId: config.keyId }));
    await clients.kms.send(new CancelKeyDeletionCommand({ KeyId: KeyMetadata?.KeyId }));
    await clients.kms.send(new EnableKeyCommand({ KeyId: KeyMetadata?.KeyId }));
  } else {
    await ensureResources(clients, config);
  }
}

/** The AWS commands a store's clients send, by name, as they are sent (instrumentation, not a mock). */
export function recordCommands(
  clients: ReturnType<typeof createAwsClients>,
): Array<{ command: string; at: number }> {
  const sent: Array<{ command: string; at: number }> = [];
  const record: InitializeMiddleware<object, MetadataBearer> = (next, context) => (args) => {
    sent.push({ command: String(context.commandName), at: Date.now() });
    return next(args);
  };
  for (const client of [clients.ddb, clients.sqs, clients.kms]) {
    (client.middlewareStack as unknown as MiddlewareStack<object, MetadataBearer>).add(record, {
      step: "initialize",
      name: `recordCommands-${randomUUID()}`,
    });
  }
  return sent;
}
