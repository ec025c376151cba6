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
    if (status === 504) return "not_responding"; // a gateway (the runner, a load balancer) timed out
    if (status !== undefined && status > 0) return "failed";
    if (typeof link.code === "string" && UNREACHABLE_CODES.has(link.code)) return "unreachable";
    if (link.code === -32001 || link.code === "REQUEST_TIMEOUT") return "not_responding"; // MCP request timeout
  }
  const text = causeChain(error)
    .map((link) => link.message)
    .join(" ");
  if (/fetch failed|socket hang up|other side closed|ECONNREFUSED|ECONNRESET/i.test(text))
    return "unreachable";
  return "failed";
}

/**
 * Whether the upstream's answer was refused for its content — a reply whose shape the protocol's schema
 * rejects (a tools list that is not one) — or the address was refused by the outbound guard: trying
 * again with nothing changed gives the same answer.
 */
export function isRefusedAnswer(error: unknown): boolean {
  return causeChain(error).some(
    (link) =>
      link.name === "ZodError" || link.code === "INVALID_RESULT" || link.name === "ForbiddenAddressError",
  );
}

/** A one-line description of the error and its causes, for `error` / `lastError`. */
export function describeFailure(error: unknown): string {
  const parts: string[] = [];
  for (const link of causeChain(error)) {
    const plain = plainWords(link);
    if (plain) return parts.length > 0 ? `${parts.join(": ")}: ${plain}` : plain;
    // An HTTP refusal's status says it all; the SDK's code for it would only add noise.
    const code = typeof link.code === "string" && link.name !== "SdkHttpError" ? ` (${link.code})` : "";
    const body = responseBody(link);
    const text = `${link.message}${code}${body ? `: ${body}` : ""}`.trim();
    if (text && !parts.some((part) => part.includes(text))) parts.push(text);
  }
  return parts.join(": ").slice(0, 1_000) || "unknown error";
}

/**
 * A sentence a person can act on for errors whose own text is a dump: a reply that is not JSON, or
 * JSON that is not JSON-RPC (a validator's issue list), or a body of the wrong kind.
 */
function plainWords(link: ErrorLink): string | undefined {
  // The dump may come wrapped ("Version negotiation probe failed: [ { "code": … } ]").
  if (link.name === "ZodError" || /(^|: )\[\s*\{\s*"(code|expected|path)"/.test(link.message))
    return "the server's reply is not a JSON-RPC message (is this URL an MCP endpoint?)";
  if (link.name === "SyntaxError" && /JSON/.test(link.message))
    return "the server's reply is not valid JSON (is this URL an MCP endpoint?)";
  const type = /Unexpected content type: ([^\s;]+)/.exec(link.message)?.[1];
  if (type) return `the server answered with ${type}, not MCP (is this URL an MCP endpoint?)`;
  return undefined;
}

type ErrorLink = { name: string; message: string; code?: unknown; status?: unknown; data?: unknown };

/** How much of an HTTP refusal's body an error keeps: enough to say why, not a page of HTML. */
const MAX_BODY_CHARS = 300;

/**
 * What an HTTP refusal's body says (the SDK keeps it in `data.text`): a problem's `detail`, a JSON-RPC
 * error's `message`, else the text itself, shortened.
 */
function responseBody(link: ErrorLink): string | undefined {
  const text = (link.data as { text?: unknown } | undefined)?.text;
  if (typeof text !== "string" || !text.trim()) return undefined;
  try {
    const parsed = JSON.parse(text) as { detail?: unknown; error?: { message?: unknown } };
    const said = parsed.detail ?? parsed.error?.message;
    if (typeof said === "string") return said.slice(0, MAX_BODY_CHARS);
  } catch {
    // not JSON: the text as it is
  }
  return text.trim().replace(/\s+/g, " ").slice(0, MAX_BODY_CHARS);
}

/** Whether `error`'s request found no connection (refused: nothing of it was sent). */
export function connectionRefused(error: unknown): boolean {
  return causeChain(error).some((link) => link.code === "ECONNREFUSED");
}

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

/**
 * The HTTP status of an MCP SDK transport refusal (v2's SdkHttpError; v1's StreamableHTTPError,
 * SseError); undefined otherwise.
 */
export function transportHttpStatus(error: unknown): number | undefined {
  const { code, message, name, data } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    name?: unknown;
    data?: { status?: unknown };
  };
  if (name === "SdkHttpError" && typeof data?.status === "number") return data.status;
  const sdkError =
    name === "StreamableHTTPError" ||
    name === "SseError" ||
    /^(Streamable HTTP error|SSE error)/.test(String(message));
  return sdkError && typeof code === "number" ? code : undefined;
}

/** The HTTP status an error in the cause chain carries, from the SDK's error or its message. */
/**
 * The HTTP status an upstream refused with, anywhere in the error's causes (an SDK `UnauthorizedError`
 * counts as 401); undefined when none is known.
 */
export function refusalStatus(error: unknown): number | undefined {
  for (const link of causeChain(error)) {
    if (link.name === "UnauthorizedError") return 401;
    const status = httpStatus(link);
    if (status !== undefined) return status;
  }
  return undefined;
}

function httpStatus(link: ErrorLink): number | undefined {
  const refusal = transportHttpStatus(link);
  if (refusal !== undefined) return refusal;
  // The SDK's InsufficientScopeError: a 403 whose challenge names the scope the resource wants.
  if (/^Insufficient scope\b/.test(link.message)) return 403;
  const match =
    /\bHTTP (\d{3})\b|\b(\d{3}) (?:Unauthorized|Forbidden)\b|Non-200 status code \((\d{3})\)/.exec(
      link.message,
    );
  const status = match ? Number(match[1] ?? match[2] ?? match[3]) : undefined;
  return status;
}

/** What a secret is replaced with. */
const REDACTED = "[REDACTED]";
/** Shortest secret value scrubbed at all (raw, URL-encoded, JSON-escaped). */
const MIN_VALUE_LENGTH = 4;
/** Shortest derived form scrubbed: a whitespace-separated part, a base64 run. Shorter ones hit plain text. */
const MIN_FORM_LENGTH = 8;

/**
 * Error text with every secret value replaced — header and env values the server was configured
 * with, so diagnostics never carry credentials. Each value (≥ 4 characters) and each of its
 * whitespace-separated parts (≥ 8, e.g. the token of "Bearer …") is caught raw, URL-encoded,
 * JSON-escaped, and base64 / base64url-encoded, also inside longer base64 such as HTTP Basic
 * credentials. Longest forms are replaced first, so one never leaves a fragment of another.
 */
export function scrubSecrets(text: string, secrets: Iterable<string>): string {
  const forms = new Set<string>();
  for (const value of new Set(secrets)) {
    if (value.length < MIN_VALUE_LENGTH) continue;
    const parts = value.split(/\s+/).filter((part) => part.length >= MIN_FORM_LENGTH);
    for (const piece of new Set([value, ...parts])) {
      forms.add(piece).add(encodeURIComponent(piece));
      for (const form of jsonEscapedForms(piece)) forms.add(form);
      for (const form of base64Forms(piece)) if (form.length >= MIN_FORM_LENGTH) forms.add(form);
    }
  }
  let scrubbed = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    scrubbed = scrubbed.split(form).join(REDACTED);
  }
  return scrubbed;
}

/**
 * A JSON value with the secret values scrubbed from it as {@link scrubSecrets} scrubs its JSON text
 * (`text`, when the caller has it already): the value itself when none occur; undefined when scrubbing
 * leaves no JSON (a replacement fell inside an escape).
 */
export function scrubJson<T>(
  value: T,
  secrets: Iterable<string>,
  text = JSON.stringify(value),
): T | undefined {
  if (text === undefined) return value;
  const scrubbed = scrubSecrets(text, secrets);
  if (scrubbed === text) return value;
  try {
    return JSON.parse(scrubbed) as T;
  } catch {
    return undefined;
  }
}

/**
 * The value as the inside of a JSON string, the way common serializers escape it: JSON.stringify;
 * non-ASCII as \uXXXX in either hex case (Python, PHP, Jackson); "<", ">", "&", U+2028/9 as \u escapes
 * (Go); and each of those with "/" escaped as "\/" (PHP, some Java). Same length rule as the raw value:
 * an escaped spelling is never shorter, nor more common, than the value itself.
 */
function jsonEscapedForms(value: string): string[] {
  const plain = JSON.stringify(value).slice(1, -1);
  const unicodeEscape = (upper: boolean) => (char: string) => {
    const hex = char.charCodeAt(0).toString(16).padStart(4, "0");
    return `\\u${upper ? hex.toUpperCase() : hex}`;
  };
  // Without the u flag these classes match UTF-16 code units, so astral characters become surrogate pairs.
  const variants = [
    plain,
    plain.replace(/[\u007f-\uffff]/g, unicodeEscape(false)),
    plain.replace(/[\u007f-\uffff]/g, unicodeEscape(true)),
    plain.replace(/[<>&\u2028\u2029]/g, unicodeEscape(false)),
  ];
  return variants.flatMap((form) => [form, form.replaceAll("/", "\\/")]);
}

/**
 * Base64 and base64url runs that any base64 text encoding the value must contain. Encoded at byte
 * offset o, the value's bytes from d = (3 - o % 3) % 3 on fill whole 3-byte groups, whose encoding
 * appears verbatim; so for d = 0, 1, 2 the whole groups from byte d, unpadded. Plus the encoding of
 * the value alone, with and without padding, so its trailing partial group goes too.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const runs = [0, 1, 2].map((d) => {
    const whole = Math.max(0, Math.floor((bytes.length - d) / 3) * 3);
    return bytes.subarray(d, d + whole).toString("base64");
  });
  const complete = bytes.toString("base64");
  return [...runs, complete, complete.replace(/=+$/, "")].flatMap((form) => [
    form,
    form.replaceAll("+", "-").replaceAll("/", "_"),
  ]);
}
