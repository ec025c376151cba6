/**
 * State: the single table, the envelope-sealing key and the two shared secrets. Each is exposed to
 * code through a link whose name `packages/aws/src/config.ts` reads (`SST_RESOURCE_<Name>`), and whose
 * permissions are only what every holder of the link needs.
 */

import { isProduction } from "./stages";

const production = isProduction($app.stage);

/** The one table; keys, index and TTL match `ensureTable` in packages/aws/src/bootstrap.ts. */
export const table = new sst.aws.Dynamo("GatewayTable", {
  fields: {
    pk: "string",
    sk: "string",
    kind: "string",
    kindSort: "string",
    changeFeed: "string",
    changedAt: "string",
  },
  primaryIndex: { hashKey: "pk", rangeKey: "sk" },
  globalIndexes: {
    byKind: { hashKey: "kind", rangeKey: "kindSort", projection: "all" },
    // The servers' change feed: the data plane reads what changed since its last look, not the world.
    byChange: { hashKey: "changeFeed", rangeKey: "changedAt", projection: "keys-only" },
  },
  ttl: "expiresAt",
  deletionProtection: production,
  // Point-in-time recovery (35 days of restores), stated here so no change of SST's default drops it.
  transform: { table: { pointInTimeRecovery: { enabled: true } } },
});

/** Item-level DynamoDB actions the repositories use (no Scan, no table management). */
export const TABLE_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:ConditionCheckItem",
];

/** `Resource.Table.name`: the table, read/write at item level, and its indexes. */
export const tableLink = new sst.Linkable("Table", {
  properties: { name: table.name },
  include: [
    sst.aws.permission({
      actions: TABLE_ACTIONS,
      resources: [table.arn, $interpolate`${table.arn}/index/*`],
    }),
  ],
});

/** The envelope-sealing key: one AES-256 data key per sealed value, wrapped by this key. */
export const key = new aws.kms.Key("SealingKey", {
  description: `MCP Gateway envelope sealing (${$app.name}/${$app.stage})`,
  enableKeyRotation: true,
  deletionWindowInDays: production ? 30 : 7,
});

new aws.kms.Alias("SealingKeyAlias", {
  name: `alias/${$app.name}-${$app.stage}`,
  targetKeyId: key.keyId,
});

/**
 * `Resource.Key.id`: opening sealed values (kms:Decrypt) is all a holder of the link may do. Sealing
 * needs `sealWithKey` as well, which only the functions that write sealed values get.
 */
export const keyLink = new sst.Linkable("Key", {
  properties: { id: key.keyId, arn: key.arn },
  include: [sst.aws.permission({ actions: ["kms:Decrypt"], resources: [key.arn] })],
});

/**
 * The stdio runner's only KMS right: open the values it renders for children — stdio env
 * (`mcpgw:field` = `env`) and secret-store entries (an `mcpgw:secret` context) — never an HTTP
 * server's headers. Children could not borrow even this: they run under other uids and never learn
 * the container-credentials path (see infra/runner.ts).
 */
export const openStdioSecretsOnly = [
  {
    actions: ["kms:Decrypt"],
    resources: [key.arn],
    conditions: [{ test: "StringEquals", variable: "kms:EncryptionContext:mcpgw:field", values: ["env"] }],
  },
  {
    actions: ["kms:Decrypt"],
    resources: [key.arn],
    conditions: [{ test: "Null", variable: "kms:EncryptionContext:mcpgw:secret", values: ["false"] }],
  },
];

/** What `/readyz` asks of the key: its metadata (exists, enabled), never a cryptographic operation. */
export const describeKey = { actions: ["kms:DescribeKey"], resources: [key.arn] };

/** The admin function's extra grant: seal under any context (server headers/env/auth, secrets, tokens). */
export const sealWithKey = { actions: ["kms:GenerateDataKey"], resources: [key.arn] };

/**
 * Sealing upstream OAuth tokens only (the worker: refreshed and client-credentials tokens), under
 * `upstreamCredentialContext`'s `mcpgw:field` = `upstream-oauth`: never a server's headers or env.
 */
export const sealRefreshedTokens = {
  actions: ["kms:GenerateDataKey"],
  resources: [key.arn],
  conditions: [
    { test: "StringEquals", variable: "kms:EncryptionContext:mcpgw:field", values: ["upstream-oauth"] },
  ],
};

/** The gateway's: upstream OAuth tokens, and a caller's authorization under way (its state's context). */
export const sealUpstreamOauth = [
  sealRefreshedTokens,
  {
    actions: ["kms:GenerateDataKey"],
    resources: [key.arn],
    conditions: [
      { test: "Null", variable: "kms:EncryptionContext:mcpgw:upstream-oauth-state", values: ["false"] },
    ],
  },
];

/**
 * The access-token signing key: asymmetric P-256 for ES256 (the private key never leaves KMS; the
 * gateway publishes its public half as the JWKS). Matches `ensureSigningKey` in bootstrap.ts.
 */
export const signingKey = new aws.kms.Key("TokenSigningKey", {
  description: `MCP Gateway access-token signing (${$app.name}/${$app.stage})`,
  customerMasterKeySpec: "ECC_NIST_P256",
  keyUsage: "SIGN_VERIFY",
  deletionWindowInDays: production ? 30 : 7,
});

new aws.kms.Alias("TokenSigningKeyAlias", {
  name: `alias/${$app.name}-${$app.stage}-token-signing`,
  targetKeyId: signingKey.keyId,
});

/** `Resource.SigningKey.id`: signing access tokens and reading the public key is all it allows. */
export const signingKeyLink = new sst.Linkable("SigningKey", {
  properties: { id: signingKey.keyId, arn: signingKey.arn },
  include: [sst.aws.permission({ actions: ["kms:Sign", "kms:GetPublicKey"], resources: [signingKey.arn] })],
});

/** `Resource.AdminToken.value`: the bearer token of the control plane (`npx sst secret set AdminToken …`). */
export const adminToken = new sst.Secret("AdminToken");

/** `Resource.RunnerToken.value`: the bearer token the functions present to the stdio runner. */
export const runnerToken = new sst.Secret("RunnerToken");
