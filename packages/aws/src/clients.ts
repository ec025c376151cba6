import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KMSClient } from "@aws-sdk/client-kms";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { type AwsConfig, type AwsService, serviceEndpoint } from "./config";
import { retryUnreadableAnswers } from "./unreadable-answers";

/** How long one DynamoDB request may take before it is abandoned (and tried again by the SDK). */
export const DYNAMODB_REQUEST_TIMEOUT_MS = 5_000;

/** The SDK clients the system uses, pointed at AWS or at an emulator. */
export interface AwsClients {
  ddb: DynamoDBDocumentClient;
  sqs: SQSClient;
  kms: KMSClient;
}

/**
 * Builds the clients, each with its service's endpoint (see {@link serviceEndpoint}). Endpoints are
 * passed explicitly, not left to the SDK's own AWS_ENDPOINT_URL_* reading: an SQS client given none
 * sends each call to its QueueUrl's host.
 */
export function createAwsClients(config: AwsConfig): AwsClients {
  const options = (service: AwsService) => {
    const endpoint = serviceEndpoint(config, service);
    return {
      region: config.region,
      ...(endpoint ? { endpoint } : {}),
      ...(config.credentials ? { credentials: config.credentials } : {}),
    };
  };
  // Every table operation is short: one that hangs ends (and is retried) instead of holding a call.
  const dynamodb = new DynamoDBClient({
    ...options("dynamodb"),
    requestHandler: { requestTimeout: DYNAMODB_REQUEST_TIMEOUT_MS },
  });
  const sqs = new SQSClient(options("sqs"));
  const kms = new KMSClient(options("kms"));
  // An answer cut short or not JSON is tried again, not surfaced as the parser's SyntaxError.
  for (const client of [dynamodb, sqs, kms]) retryUnreadableAnswers(client as never);
  const ddb = DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } });
  return { ddb, sqs, kms };
}
