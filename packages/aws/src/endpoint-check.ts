/**
 * Whether the AWS endpoints a local run was given answer AWS calls at all — one cheap list call per
 * service, one attempt each, bounded — and, when one does not, why in a few words: nothing listening,
 * no answer in time, the credentials refused, or an error answered. For `npm run dev`'s start, so a
 * wrong AWS_ENDPOINT_URL is one line, not the SDK's retries and a stack trace.
 */
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { KMSClient, ListKeysCommand } from "@aws-sdk/client-kms";
import { ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { AWS_SERVICES, type AwsConfig, type AwsService, serviceEndpoint } from "./config";

/** How one endpoint failed: `kind` for what to do next, `reason` for the line ("connection refused", "HTTP 500"). */
export interface EndpointFailure {
  kind: "unreachable" | "timeout" | "credentials" | "error";
  reason: string;
}

/** A failed service's endpoint, and the variable that named it. */
export interface EndpointProblem extends EndpointFailure {
  service: AwsService;
  endpoint: string;
  /** AWS_ENDPOINT_URL_<SERVICE> when the service has its own endpoint, else AWS_ENDPOINT_URL. */
  variable: string;
}

/** How long one check waits for an answer by default. */
export const ENDPOINT_CHECK_MS = 5_000;

/** The error names AWS (and emulators) give a request whose signature or key they refuse. */
const CREDENTIAL_ERRORS = new Set([
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "IncompleteSignature",
  "IncompleteSignatureException",
  "MissingAuthenticationToken",
  "MissingAuthenticationTokenException",
  "InvalidClientTokenId",
  "SignatureDoesNotMatch",
  "AccessDenied",
  "AccessDeniedException",
  "ExpiredToken",
  "ExpiredTokenException",
]);

/** Socket errors meaning nothing answered, in words. */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

/**
 * Sends one list call (DynamoDB ListTables, SQS ListQueues, KMS ListKeys) to each service's endpoint
 * except those in `skip`, in parallel, one attempt each within `timeoutMs`; the first service (in
 * AWS_SERVICES order) that failed, or undefined when every one answered.
 */
export async function checkAwsEndpoints(
  config: AwsConfig,
  { timeoutMs = ENDPOINT_CHECK_MS, skip = [] as string[] } = {},
): Promise<EndpointProblem | undefined> {
  const checked = AWS_SERVICES.flatMap((service) => {
    const endpoint = serviceEndpoint(config, service);
    return endpoint && !skip.includes(endpoint) ? [{ service, endpoint }] : [];
  });
  const outcomes = await Promise.all(
    checked.map(async ({ service, endpoint }) => {
      try {
        await listOnce(config, service, endpoint, AbortSignal.timeout(timeoutMs));
        return undefined;
      } catch (error) {
        const variable = config.serviceEndpoints[service]
          ? `AWS_ENDPOINT_URL_${service.toUpperCase()}`
          : "AWS_ENDPOINT_URL";
        return { service, endpoint, variable, ...endpointFailureOf(error, timeoutMs) };
      }
    }),
  );
  return outcomes.find((outcome) => outcome !== undefined);
}

/** One attempt at the service's cheapest list call; the client is dropped after it. */
async function listOnce(config: AwsConfig, service: AwsService, endpoint: string, abortSignal: AbortSignal) {
  const options = {
    region: config.region,
    endpoint,
    maxAttempts: 1,
    ...(config.credentials ? { credentials: config.credentials } : {}),
  };
  const send = { abortSignal };
  if (service === "dynamodb") {
    const client = new DynamoDBClient(options);
    await client.send(new ListTablesCommand({ Limit: 1 }), send).finally(() => client.destroy());
  } else if (service === "sqs") {
    const client = new SQSClient(options);
    await client.send(new ListQueuesCommand({ MaxResults: 1 }), send).finally(() => client.destroy());
  } else {
    const client = new KMSClient(options);
    await client.send(new ListKeysCommand({ Limit: 1 }), send).finally(() => client.destroy());
  }
}

/** What an SDK error says of the endpoint that caused it. */
export function endpointFailureOf(error: unknown, timeoutMs = ENDPOINT_CHECK_MS): EndpointFailure {
  const failure = (error ?? {}) as {
    name?: string;
    code?: string;
    cause?: { code?: string };
    $metadata?: { httpStatusCode?: number };
  };
  const status = failure.$metadata?.httpStatusCode;
  if (status !== undefined) {
    const name = failure.name && /^[A-Z]\w*$/.test(failure.name) && !GENERIC_NAMES.has(failure.name);
    const reason = `HTTP ${status}${name ? ` ${failure.name}` : ""}`;
    const refused = (status === 400 || status === 403) && CREDENTIAL_ERRORS.has(failure.name ?? "");
    return { kind: refused ? "credentials" : "error", reason };
  }
  if (failure.name === "TimeoutError" || failure.name === "AbortError") {
    return { kind: "timeout", reason: `no answer within ${timeoutMs / 1_000} s` };
  }
  const code = failure.code ?? failure.cause?.code ?? "";
  if (UNREACHABLE[code]) return { kind: "unreachable", reason: UNREACHABLE[code] };
  const message = error instanceof Error ? error.message : String(error);
  return { kind: "error", reason: (code || message).slice(0, 200) };
}

/** Error names that say nothing of the answer (a parser's, a generic one). */
const GENERIC_NAMES = new Set(["Error", "SyntaxError", "TypeError", "UnknownError"]);
