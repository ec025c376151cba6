/**
 * "The store is unavailable": the one place that decides which failures mean the table, queue or key
 * could not be used just now — nothing answered (connection refused or reset, a timeout), AWS answered
 * 5xx or throttled, its answer could not be read, a resource is missing or unusable, or a write was
 * not made (a StoreError) — so that REST and MCP alike answer 503 `store.unavailable` with
 * `Retry-After`, never 500. A refusal of the request itself (4xx: validation, access) is not one.
 */
import { AppError } from "@mcpgw/core";
import { outageOf } from "./outages";

/** What a caller is told to wait before trying again, in seconds. */
export const STORE_RETRY_AFTER_SECONDS = 1;

/** Throttling error names of DynamoDB, SQS and KMS (answered 400, yet transient). */
const THROTTLING = new Set([
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "ThrottledException",
  "LimitExceededException",
]);

/** Errors raised before anything was sent for reasons that are no outage (the deployment's own). */
const NOT_SENT = new Set(["CredentialsProviderError"]);

interface SdkError extends Error {
  $metadata?: { httpStatusCode?: number };
  $fault?: string;
  $retryable?: { throttling?: boolean };
}

/**
 * True when `error` (or one of its `cause`s) says the store could not be used just now. Only errors
 * that went through an AWS SDK client count (they carry its `$metadata`), besides StoreError.
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current.name === "StoreError" || current.name === "UnreadableAnswer") return true;
    const sdk = current as SdkError;
    if (sdk.$metadata !== undefined && !NOT_SENT.has(sdk.name)) {
      const status = sdk.$metadata.httpStatusCode;
      if (status === undefined || status >= 500 || status === 429) return true;
      if (sdk.$fault === "server" || sdk.$retryable?.throttling || THROTTLING.has(sdk.name)) return true;
      if (outageOf(sdk)) return true;
    }
    current = current.cause;
  }
  return false;
}

/**
 * The 503 `store.unavailable` problem for `error` when it is one (see {@link isStoreUnavailable}),
 * carrying `retryAfter` and any `extra` fields (a request id); undefined otherwise. The detail says
 * only what failed, never the AWS error's text.
 */
export function storeUnavailable(error: unknown, extra: Record<string, unknown> = {}): AppError | undefined {
  if (!isStoreUnavailable(error)) return undefined;
  const detail =
    error instanceof Error && error.name === "StoreError"
      ? `${error.message}. Try again.`
      : "The store cannot be reached just now. Try again.";
  return new AppError(
    "store.unavailable",
    detail,
    { retryAfter: STORE_RETRY_AFTER_SECONDS, ...extra },
    {
      cause: error,
    },
  );
}
