import type { FailureReason } from "@mcpgw/core";

/** Network error codes that mean the upstream could not be reached at all. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_HAS_EXPIRED",
]);

/** An attempt that ran past its deadline. */
export class DeadlineError extends Error {
  override readonly name = "DeadlineError";
}

/** Why an attempt failed, from the error the MCP client or transport threw. */
export function classifyFailure(error: unknown): FailureReason {
  for (const link of causeChain(error)) {
    if (link.name === "DeadlineError" || link.name === "AbortError" || link.name === "TimeoutError")
      return "not_responding";
    if (link.name === "ForbiddenAddressError") return "failed";
    const status = httpStatus(link);
    if (status === 401 || status === 403) return "access_denied";
    if (status !== undefined && status > 0) return "failed";
    if (typeof link.code === "string" && UNREACHABLE_CODES.has(link.code)) return "unreachable";
    if (link.code === -32001) return "not_responding"; // MCP request timeout
  }
  const text = causeChain(error)
    .map((link) => link.message)
    .join(" ");
  if (/fetch failed|socket hang up|other side closed|ECONNREFUSED|ECONNRESET/i.test(text))
    return "unreachable";
  return "failed";
}

/** A one-line description of the error and its causes, for `error` / `lastError`. */
export function describeFailure(error: unknown): string {
  const parts: string[] = [];
  for (const link of causeChain(error)) {
    const code = typeof link.code === "string" ? ` (${link.code})` : "";
    const text = `${link.message}${code}`.trim();
    if (text && !parts.some((part) => part.includes(text))) parts.push(text);
  }
  return parts.join(": ").slice(0, 1_000) || "unknown error";
}

type ErrorLink = { name: string; message: string; code?: unknown; status?: unknown };

function causeChain(error: unknown): ErrorLink[] {
  const chain: ErrorLink[] = [];
  let current: unknown = error;
  while (current && chain.length < 8) {
    if (current instanceof Error) {
      chain.push(current as Error & ErrorLink);
      current = (current as { cause?: unknown }).cause;
    } else if (typeof current === "object" && "message" in current) {
      chain.push(current as ErrorLink);
      current = (current as { cause?: unknown }).cause;
    } else {
      chain.push({ name: "Error", message: String(current) });
      break;
    }
  }
  return chain;
}

/** The HTTP status of an MCP SDK transport refusal (StreamableHTTPError, SseError); undefined otherwise. */
export function transportHttpStatus(error: unknown): number | undefined {
  const { code, message, name } = (error ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  const sdkError =
    name === "StreamableHTTPError" ||
    name === "SseError" ||
    /^(Streamable HTTP error|SSE error)/.test(String(message));
  return sdkError && typeof code === "number" ? code : undefined;
}

/** The HTTP status an error in the cause chain carries, from the SDK's error or its message. */
function httpStatus(link: ErrorLink): number | undefined {
  const refusal = transportHttpStatus(link);
  if (refusal !== undefined) return refusal;
  const match =
    /\bHTTP (\d{3})\b|\b(\d{3}) (?:Unauthorized|Forbidden)\b|Non-200 status code \((\d{3})\)/.exec(
      link.message,
    );
  const status = match ? Number(match[1] ?? match[2] ?? match[3]) : undefined;
  return status;
}

/**
 * Error text with every secret value replaced — header and env values the server was configured
 * with (also URL-encoded), so diagnostics never carry credentials.
 */
export function scrubSecrets(text: string, secrets: Iterable<string>): string {
  let scrubbed = text;
  const values = [...secrets].filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
  for (const value of values) {
    for (const form of new Set([
      value,
      encodeURIComponent(value),
      ...value.split(/\s+/).filter((part) => part.length >= 8),
    ])) {
      scrubbed = scrubbed.split(form).join("[REDACTED]");
    }
  }
  return scrubbed;
}
