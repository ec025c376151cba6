/**
 * What an upstream's configured HTTP header may be — one source for the API's schema (server.ts) and
 * the console's form, which checks a header before sending it. No dependency, so the console bundles it
 * alone.
 */

/**
 * Headers an admin may not set on an upstream: the connection's own (hop-by-hop, RFC 9110 §7.6.1), the
 * ones the HTTP client computes (`Host`, `Content-Length`) and the ones the MCP transport owns (its
 * session, protocol version and resumption). Set, they would break every request or be dropped unsaid.
 */
export const FORBIDDEN_HEADERS: readonly string[] = [
  "connection",
  "content-length",
  "host",
  "keep-alive",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/** An RFC 9110 token: what a header name is made of. */
export const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** CR, LF and NUL could split or smuggle headers. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses (as \x00: schema tools read it)
export const NO_CR_LF_NUL = /^[^\r\n\x00]*$/;

/**
 * What a header value may hold besides CR, LF and NUL (refused on their own): tab, visible ASCII,
 * spaces and Latin-1 (RFC 9110 field-value, obs-text) — no other control character, and no character
 * past U+00FF, which no HTTP client can send (every request would fail: "Cannot convert argument to a
 * ByteString"). Listed as what is allowed, so a schema tool reading it (in any regex dialect, astral
 * characters included) allows no more.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is let through here (NO_CR_LF_NUL refuses it)
export const SENDABLE = /^[\t\r\n\x00\x20-\x7E\x80-\xFF]*$/;

/** A header value as a whole: {@link NO_CR_LF_NUL} and {@link SENDABLE} at once (what schemas show). */
export const HEADER_VALUE = /^[\t\x20-\x7E\x80-\xFF]*$/;

/** The sentences a header's problems are told in (after the header's name). */
export const HEADER_SAYS = {
  notToken: "must be a valid HTTP header name: letters, digits and !#$%&'*+-.^_`|~, no spaces",
  forbidden: "is one the gateway or the connection sets itself: it cannot be configured",
  splits: "must not contain CR, LF or NUL",
  unsendable:
    "must hold only characters an HTTP header can carry: no control characters, nothing beyond Latin-1 (no emoji, no € or curly quotes)",
} as const;

/** True for a header the gateway or the connection sets itself (any case). */
export function isForbiddenHeader(name: string): boolean {
  return FORBIDDEN_HEADERS.includes(name.toLowerCase());
}

/** What is wrong with a header name, in words; undefined when nothing is. */
export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_TOKEN.test(name)) return HEADER_SAYS.notToken;
  if (isForbiddenHeader(name)) return HEADER_SAYS.forbidden;
  return undefined;
}

/** What is wrong with a header value, in words; undefined when nothing is. */
export function headerValueProblem(value: string): string | undefined {
  if (!NO_CR_LF_NUL.test(value)) return HEADER_SAYS.splits;
  if (!SENDABLE.test(value)) return HEADER_SAYS.unsendable;
  return undefined;
}
