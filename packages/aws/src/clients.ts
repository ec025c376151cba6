import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KMSClient } from "@aws-sdk/client-kms";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { AwsConfig } from "./config";

/** The SDK clients the system uses, pointed at AWS or at an emulator. */
export interface AwsClients {
  ddb: DynamoDBDocumentClient;
  sqs: SQSClient;
  kms: KMSClient;
}

/** Builds the clients; the SQS endpoint is passed explicitly so it never follows a QueueUrl's host. */
export function createAwsClients(config: AwsConfig): AwsClients {
  const common = {
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
  };
  const ddb = DynamoDBDocumentClient.from(new DynamoDBClient(common), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return { ddb, sqs: new SQSClient(common), kms: new KMSClient(common) };
}
