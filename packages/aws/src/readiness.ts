import { DescribeKeyCommand } from "@aws-sdk/client-kms";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { AwsClients } from "./clients";
import type { AwsConfig } from "./config";
import type { SqsJobQueue } from "./jobs";
import { type Dependency, outageOf } from "./outages";
import { keys } from "./table";

/**
 * What one readiness check found: `ok`; `missing` (the resource does not exist); `unusable` (a key
 * disabled or pending deletion); `unreachable` (no answer: the endpoint is down); `timeout` (no answer
 * in time); `error` (any other refusal, e.g. access denied).
 */
export type CheckState = (typeof CHECK_STATES)[number];
export const CHECK_STATES = ["ok", "missing", "unusable", "unreachable", "timeout", "error"] as const;

/** How long one check may take before it counts as `timeout`. */
export const CHECK_TIMEOUT_MS = 2_000;

/**
 * Checks the table, the job queue and the key with one cheap call each, in parallel, each bounded by
 * `timeoutMs`: a GetItem of a key never written, GetQueueAttributes (QueueArn) on the queue's URL, and
 * DescribeKey (KeyState) — calls the functions' item-level, send-only and decrypt grants allow, plus
 * sqs:GetQueueAttributes and kms:DescribeKey granted for this (infra/).
 */
export async function checkResources(
  store: { clients: AwsClients; config: AwsConfig; jobs: SqsJobQueue },
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<Record<Dependency, CheckState>> {
  const { clients, config, jobs } = store;
  const [table, queue, key] = await Promise.all([
    bounded(timeoutMs, async (abortSignal) => {
      await clients.ddb.send(new GetCommand({ TableName: config.tableName, Key: keys.readinessProbe }), {
        abortSignal,
      });
      return "ok";
    }),
    bounded(timeoutMs, async (abortSignal) => {
      try {
        const QueueUrl = await jobs.url();
        await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }), {
          abortSignal,
        });
        return "ok";
      } catch (error) {
        // Resolved again next time: a re-created queue may have another URL.
        if (outageOf(error)) jobs.forgetUrl();
        throw error;
      }
    }),
    bounded(timeoutMs, async (abortSignal) => {
      const { KeyMetadata } = await clients.kms.send(new DescribeKeyCommand({ KeyId: config.keyId }), {
        abortSignal,
      });
      return KeyMetadata?.KeyState === "Enabled" ? "ok" : "unusable";
    }),
  ]);
  return { table, queue, key };
}

/** Runs `check` with an abort signal and a deadline; whatever it throws becomes a {@link CheckState}. */
export async function bounded(
  timeoutMs: number,
  check: (signal: AbortSignal) => Promise<CheckState>,
): Promise<CheckState> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<CheckState>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve("timeout");
    }, timeoutMs);
  });
  try {
    return await Promise.race([check(controller.signal).catch(checkStateOf), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The check state an error means. */
export function checkStateOf(error: unknown): CheckState {
  const outage = outageOf(error);
  if (outage) return outage.outage;
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError"))
    return "timeout";
  // No credentials to sign with: nothing was sent, but the endpoint is not to blame.
  if (error instanceof Error && error.name === "CredentialsProviderError") return "error";
  // No HTTP status: nothing answered (connection refused or reset, DNS, a closed socket).
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata
    ?.httpStatusCode;
  return status === undefined ? "unreachable" : "error";
}
