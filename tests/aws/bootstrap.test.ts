import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { DescribeKeyCommand } from "@aws-sdk/client-kms";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { createAwsClients, ensureResources, MAX_RECEIVE_COUNT } from "@mcpgw/aws";
import { describe, expect, it } from "vitest";
import { createTestConfig } from "../support/aws";

describe("resource bootstrap", () => {
  it("is idempotent and creates the table, index, queue with redrive, and the key alias", async () => {
    const config = await createTestConfig({ keyAlias: `alias/test-${Date.now()}`, keyId: "unused" });
    const clients = createAwsClients(config);

    await ensureResources(clients, config);
    await ensureResources(clients, config);

    const table = await clients.ddb.send(new DescribeTableCommand({ TableName: config.tableName }));
    expect(table.Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual(["byKind"]);
    const { QueueUrl } = await clients.sqs.send(new GetQueueUrlCommand({ QueueName: config.queueName }));
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["RedrivePolicy"] }),
    );
    const redrive = JSON.parse(attributes.Attributes?.RedrivePolicy ?? "{}");
    expect(redrive.deadLetterTargetArn).toContain(config.deadLetterQueueName);
    expect(Number(redrive.maxReceiveCount)).toBe(MAX_RECEIVE_COUNT);
    const key = await clients.kms.send(new DescribeKeyCommand({ KeyId: config.keyAlias }));
    expect(key.KeyMetadata?.Enabled).toBe(true);
  });
});
