/**
 * Regular expressions that put rules zod checks with code into the JSON Schema of the API document
 * too, so that every value the document calls valid is accepted. JSON Schema patterns are ECMA-262;
 * these are also read alike by Python's `re` (what schema fuzzers generate from): whitespace spelled
 * out (`\s` differs between the two; `[\s\S]`, any character, does not), NUL as `\x00`, and no `$`
 * where a trailing newline would matter.
 */
import { z } from "zod";

/** ECMAScript whitespace and line terminators: what `String.prototype.trim` removes. */
const SPACE = "\\t\\n\\x0b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";

/** Holds for text with at least one character `trim()` keeps. */
export const NOT_BLANK = new RegExp(`[^${SPACE}]`);

/** Holds for text without CR, LF or NUL (which could split or smuggle an HTTP header). */
export { NO_CR_LF_NUL } from "./header-rules";

/** Holds for text that is not a mask (`…[SECRET]`, see `looksMasked`): a mask is never a credential. */
export const NOT_MASKED = new RegExp(`^(?![\\s\\S]*\\[SECRET\\][${SPACE}]*$)`);

const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const H16 = "[0-9A-Fa-f]{1,4}";
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
/** RFC 3986's IPv6address. */
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join("|");
/** Host names of ASCII letters, digits, `-` and `_`; the last label starts with a letter (never a number). */
const LABEL = "(?![Xx][Nn]--)[A-Za-z0-9_-]+";
const HOST_NAME = `(?:${LABEL}\\.)*(?![Xx][Nn]--)[A-Za-z][A-Za-z0-9_-]*`;
const PORT = "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";
/** RFC 3986 path characters (`pchar` and `/`); a query or fragment may also hold `?`. */
const PATH_CHAR = "(?:[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2})";
const QUERY_CHAR = `(?:${PATH_CHAR}|\\?)`;

/**
 * The upstream URLs the document promises to accept: http(s), no credentials, a host name, IPv4 or
 * IPv6 literal, an optional port, then RFC 3986 path, query and fragment characters. The URL parser
 * accepts more spellings (IPv4 in hex or octal, full-width digits, IDNs…) so the upstream policy can
 * refuse them by name (`server.url_forbidden`); every URL this pattern matches parses.
 */
export const HTTP_URL = new RegExp(
  `^[Hh][Tt][Tt][Pp][Ss]?://(?:${HOST_NAME}|${IPV4}|\\[(?:${IPV6})\\])(?::${PORT})?(?:/${PATH_CHAR}*)?(?:\\?${QUERY_CHAR}*)?(?:#${QUERY_CHAR}*)?$`,
);

/** JSON Schema of an object's keys (`propertyNames`), which the OpenAPI renderer leaves out of records. */
export function keysMatching(pattern: RegExp) {
  return { propertyNames: { type: "string", pattern: pattern.source } };
}

/** A string record whose key rule is in its JSON Schema too (`propertyNames`). */
export function recordOf<V extends z.ZodType>(key: z.ZodString, pattern: RegExp, value: V) {
  return z.record(key, value).meta(keysMatching(pattern));
}
