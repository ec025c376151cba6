/**
 * AWS's published on-demand unit prices, us-east-1, as the cost model's inputs (`npm run bench --
 * cost`, scripts/bench/cost.ts). They are not measured, nor fetched (the bench runs offline): each is
 * the price the page named beside it published in {@link PRICES_AS_OF}. To price another region or a
 * later date, change the numbers here (and the date) and run the bench again; nothing else holds a price.
 * Free tiers are left out (a month's first million Lambda requests, 25 GB of DynamoDB storage…).
 */

/** When the prices below were as published on the pages cited. */
export const PRICES_AS_OF = "2025";
export const PRICES_REGION = "us-east-1";

export const PRICES = {
  dynamodb: {
    // https://aws.amazon.com/dynamodb/pricing/on-demand/ (on-demand prices halved on 2024-11-01)
    /** Standard table class, on-demand: $ per million write request units (1 KB each). */
    perMillionWriteUnits: 0.625,
    /** $ per million read request units (4 KB strongly consistent, or twice that eventually). */
    perMillionReadUnits: 0.125,
    /** $ per GB-month of table and index storage (each item counts 100 bytes of overhead besides). */
    storagePerGbMonth: 0.25,
    /** $ per GB-month of continuous backups (point-in-time recovery; on in infra/storage.ts). */
    pitrPerGbMonth: 0.2,
    // https://aws.amazon.com/dynamodb/pricing/provisioned/
    /** Provisioned capacity: $ per WCU-hour and per RCU-hour (for the 1,000 calls/s comparison). */
    perWcuHour: 0.00065,
    perRcuHour: 0.00013,
  },
  lambda: {
    // https://aws.amazon.com/lambda/pricing/ (first tier: up to 6 billion GB-s a month)
    /** $ per request (invocation). */
    perRequest: 0.2 / 1_000_000,
    /** $ per GB-second of billed duration (1 ms granularity), by architecture. */
    perGbSecond: { x86_64: 0.0000166667, arm64: 0.0000133334 },
  },
  kms: {
    // https://aws.amazon.com/kms/pricing/
    /** $ per request with a symmetric key (Decrypt, GenerateDataKey, DescribeKey…). */
    perSymmetricRequest: 0.03 / 10_000,
    /** $ per asymmetric request other than RSA 2048 (Sign, GetPublicKey with the ECC signing key). */
    perAsymmetricRequest: 0.15 / 10_000,
    /** $ per customer managed key per month. */
    perKeyMonth: 1,
  },
  sqs: {
    // https://aws.amazon.com/sqs/pricing/ (each 64 KB chunk of a payload is one request)
    /** Standard queue: $ per request (a batch of up to 10 messages is one request). */
    perRequest: 0.4 / 1_000_000,
  },
  cloudwatch: {
    // https://aws.amazon.com/cloudwatch/pricing/
    /** Logs, standard class: $ per GB ingested (EMF metric lines are log lines too). */
    logsIngestPerGb: 0.5,
    /** $ per custom metric per month, first 10,000 metrics (an EMF metric is one per name and dimension set). */
    perMetricMonth: 0.3,
    /** $ per custom metric per month, the next 240,000. */
    perMetricMonthNext: 0.1,
  },
  fargate: {
    // https://aws.amazon.com/fargate/pricing/ (Linux; the runner's image builds for x86_64)
    perVcpuHour: { x86_64: 0.04048, arm64: 0.03238 },
    perGbHour: { x86_64: 0.004445, arm64: 0.00356 },
  },
  vpc: {
    // https://aws.amazon.com/vpc/pricing/ (NAT gateway: production's `nat: "managed"` in infra/runner.ts)
    natGatewayPerHour: 0.045,
    /** $ per GB a NAT gateway processes (the functions reach DynamoDB, KMS and SQS through it). */
    natPerGbProcessed: 0.045,
  },
} as const;

export type Prices = typeof PRICES;
