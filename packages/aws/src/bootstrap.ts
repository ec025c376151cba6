import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import {
  AlreadyExistsException,
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  NotFoundException,
} from "@aws-sdk/client-kms";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { errorFields, type Logger } from "@mcpgw/core";
import type { AwsStore } from "./aws-store";
import { writeEpoch } from "./changes";
import type { AwsClients } from "./clients";
import type { AwsConfig } from "./config";
import type { Dependency } from "./outages";
import { TABLE_KEYS } from "./table";

/** How often a job may be received before SQS moves it to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;
/** How long a received job stays invisible to other consumers (longer than one probe with grace). */
export const VISIBILITY_TIMEOUT_SECONDS = 60;

/**
 * Creates the table, the job queue with its dead-letter queue, and the KMS key with its alias —
 * idempotently, from the same names the deployed stack uses. For local runs and tests only.
 */
export async function ensureResources(clients: AwsClients, config: AwsConfig): Promise<void> {
  await Promise.all([
    ensureTable(clients, config),
    ensureQueues(clients, config),
    ensureKey(clients, config),
    ensureSigningKey(clients, config),
  ]);
}

async function ensureTable({ ddb }: AwsClients, { tableName }: AwsConfig): Promise<void> {
  const { partition, sort, byKindIndex, kind, kindSort, byChangeIndex, changeFeed, changedAt } = TABLE_KEYS;
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [partition, sort, kind, kindSort, changeFeed, changedAt].map((name) => ({
          AttributeName: name,
          AttributeType: "S",
        })),
        KeySchema: [
          { AttributeName: partition, KeyType: "HASH" },
          { AttributeName: sort, KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: byKindIndex,
            KeySchema: [
              { AttributeName: kind, KeyType: "HASH" },
              { AttributeName: kindSort, KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
          changeIndex(),
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: ddb, maxWaitTime: 60 }, { TableName: tableName });
  // A table made again gets a new epoch: the data plane drops what it read from the old one.
  await writeEpoch(ddb, tableName);
  const table = await ddb.send(new DescribeTableCommand({ TableName: tableName }));
  if (!table.Table) throw new Error(`Table ${tableName} was not created`);
  // A table made before the change feed existed gains its index (as the deployed stack's update does).
  if (!table.Table.GlobalSecondaryIndexes?.some((index) => index.IndexName === byChangeIndex)) {
    await ddb.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [changeFeed, changedAt].map((name) => ({
          AttributeName: name,
          AttributeType: "S",
        })),
        GlobalSecondaryIndexUpdates: [{ Create: changeIndex() }],
      }),
    );
  }
  await ddb
    .send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE_KEYS.ttl, Enabled: true },
      }),
    )
    .catch((error: Error) => {
      if (!/already enabled|TimeToLive is already/i.test(error.message)) throw error;
    });
}

/** The change feed's index: stamped items by time, keys only (readers then read what changed). */
function changeIndex() {
  const { byChangeIndex, changeFeed, changedAt } = TABLE_KEYS;
  return {
    IndexName: byChangeIndex,
    KeySchema: [
      { AttributeName: changeFeed, KeyType: "HASH" as const },
      { AttributeName: changedAt, KeyType: "RANGE" as const },
    ],
    Projection: { ProjectionType: "KEYS_ONLY" as const },
  };
}

async function ensureQueues({ sqs }: AwsClients, config: AwsConfig): Promise<void> {
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: config.deadLetterQueueName }));
  const dlqAttributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }),
  );
  await sqs.send(
    new CreateQueueCommand({
      QueueName: config.queueName,
      Attributes: {
        VisibilityTimeout: String(VISIBILITY_TIMEOUT_SECONDS),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqAttributes.Attributes?.QueueArn,
          maxReceiveCount: MAX_RECEIVE_COUNT,
        }),
      },
    }),
  );
}

async function ensureKey({ kms }: AwsClients, { keyAlias }: AwsConfig): Promise<void> {
  try {
    await kms.send(new DescribeKeyCommand({ KeyId: keyAlias }));
    return;
  } catch (error) {
    if (!(error instanceof NotFoundException)) throw error;
  }
  const key = await kms.send(new CreateKeyCommand({ Description: "MCP Gateway envelope sealing" }));
  try {
    await kms.send(new CreateAliasCommand({ AliasName: keyAlias, TargetKeyId: key.KeyMetadata?.KeyId }));
  } catch (error) {
    // A concurrent bootstrap created the alias first; its key is the one in use.
    if (!(error instanceof AlreadyExistsException)) throw error;
  }
}

/**
 * The access-token signing key: asymmetric ECC_NIST_P256 for SIGN_VERIFY (ES256), named by its
 * alias, as infra/storage.ts deploys it.
 */
async function ensureSigningKey({ kms }: AwsClients, { signingKeyAlias }: AwsConfig): Promise<void> {
  try {
    await kms.send(new DescribeKeyCommand({ KeyId: signingKeyAlias }));
    return;
  } catch (error) {
    if (!(error instanceof NotFoundException)) throw error;
  }
  const key = await kms.send(
    new CreateKeyCommand({
      Description: "MCP Gateway access-token signing (ES256)",
      KeySpec: "ECC_NIST_P256",
      KeyUsage: "SIGN_VERIFY",
    }),
  );
  try {
    await kms.send(
      new CreateAliasCommand({ AliasName: signingKeyAlias, TargetKeyId: key.KeyMetadata?.KeyId }),
    );
  } catch (error) {
    if (!(error instanceof AlreadyExistsException)) throw error;
  }
}

/** The shortest time between two re-creations by {@link recreateWhenMissing}. */
export const RECREATE_GAP_MS = 2_000;

/**
 * For local runs (`npm run dev`): when the store's outage log records a missing resource — the
 * emulator came back empty — runs {@link ensureResources} again, so the stack serves again without a
 * restart. One run at a time, at most one per `gapMs`; reports meanwhile (from calls already in flight)
 * are ignored, and a resource still missing after a failed run is reported, and re-created, again.
 * `onRecreated` runs after each successful run (e.g. to end the poller's pause). Returns the stop.
 */
export function recreateWhenMissing(
  store: Pick<AwsStore, "clients" | "config" | "outages" | "jobs">,
  logger: Logger,
  options: { onRecreated?: () => void; gapMs?: number } = {},
): () => void {
  const gapMs = options.gapMs ?? RECREATE_GAP_MS;
  let running = false;
  let lastRun = Number.NEGATIVE_INFINITY;
  return store.outages.onOutage((dependency: Dependency, outage) => {
    // A key disabled or pending deletion is someone's decision, not an empty emulator: left alone.
    if (outage !== "missing" || running || Date.now() - lastRun < gapMs) return;
    running = true;
    lastRun = Date.now();
    logger.warn("re-creating the local resources", { dependency });
    ensureResources(store.clients, store.config)
      .then(() => {
        store.jobs.forgetUrl();
        logger.info("local resources re-created", { dependency });
        options.onRecreated?.();
      })
      .catch((error) => logger.error("could not re-create the local resources", errorFields(error)))
      .finally(() => {
        running = false;
      });
  });
}
