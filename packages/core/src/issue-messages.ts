/**
 * What a request's field is told when it breaks a schema that gave no message of its own: a short
 * fragment a person can act on ("must be at most 900", "required"), in place of zod's validator
 * English ("Too big: expected number to be <=900"). A schema's own message always wins over these.
 */

/** A raw zod issue, as much of it as a message needs. */
export interface RawIssue {
  code?: string;
  input?: unknown;
  expected?: string;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  exact?: boolean;
  format?: string;
  prefix?: string;
  suffix?: string;
  includes?: string;
  divisor?: number | bigint;
  values?: readonly unknown[];
  keys?: readonly string[];
  options?: readonly unknown[];
}

const TYPE_WORDS: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  bigint: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  record: "an object",
  map: "an object",
  null: "null",
  date: "a date",
};

const FORMAT_WORDS: Record<string, string> = {
  url: "a URL",
  email: "an email address",
  uuid: "a UUID",
  guid: "a UUID",
  datetime: "a date and time (ISO 8601)",
  date: "a date (YYYY-MM-DD)",
  time: "a time (HH:MM:SS)",
  duration: "an ISO 8601 duration",
  ipv4: "an IPv4 address",
  ipv6: "an IPv6 address",
  base64: "base64 text",
  base64url: "base64url text",
  jwt: "a JWT",
};

/** Units of what a size bound counts, by the bounded value's kind. */
const COUNTED: Record<string, [one: string, many: string]> = {
  string: ["character", "characters"],
  array: ["item", "items"],
  set: ["item", "items"],
  map: ["entry", "entries"],
  file: ["byte", "bytes"],
};

/** `issue`'s message in words, or undefined to leave zod's (a code this does not know). */
export function issueMessage(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "required";
      if (typeof issue.input === "number" && !Number.isFinite(issue.input)) return "must be a finite number";
      return `must be ${TYPE_WORDS[issue.expected ?? ""] ?? issue.expected}, not ${kindOf(issue.input)}`;
    case "invalid_value":
      return (issue.values?.length ?? 0) === 1
        ? `must be ${quoted(issue.values?.[0])}`
        : `must be one of ${(issue.values ?? []).map(quoted).join(", ")}`;
    case "too_small":
      return bound(issue, issue.minimum, "at least", "more than");
    case "too_big":
      return bound(issue, issue.maximum, "at most", "less than");
    case "invalid_format":
      if (issue.format === "starts_with") return `must start with ${quoted(issue.prefix)}`;
      if (issue.format === "ends_with") return `must end with ${quoted(issue.suffix)}`;
      if (issue.format === "includes") return `must include ${quoted(issue.includes)}`;
      return issue.format && FORMAT_WORDS[issue.format]
        ? `must be ${FORMAT_WORDS[issue.format]}`
        : "is not in the expected form";
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys":
      return `unknown ${(issue.keys?.length ?? 0) === 1 ? "field" : "fields"} ${(issue.keys ?? []).map(quoted).join(", ")}`;
    case "invalid_union":
      return issue.options?.length
        ? `must be one of ${issue.options.map(quoted).join(", ")}`
        : "does not match any form this field takes";
    case "invalid_key":
      return "has a name that is not allowed";
    case "invalid_element":
      return "holds a value that is not allowed";
    case "custom":
      return "is not valid";
    default:
      return undefined;
  }
}

/** A size or value bound: "must not be empty", "must be at most 64 characters", "must be less than 1". */
function bound(issue: RawIssue, limit: number | bigint | undefined, within: string, beyond: string): string {
  const counted = COUNTED[issue.origin ?? ""];
  if (counted) {
    if (within === "at least" && Number(limit) === 1 && !issue.exact)
      return issue.origin === "string" ? "must not be empty" : `must have at least one ${counted[0]}`;
    const unit = Number(limit) === 1 ? counted[0] : counted[1];
    const verb = issue.origin === "string" ? "be" : "have";
    return `must ${verb} ${issue.exact ? "exactly" : within} ${limit} ${unit}`;
  }
  return `must be ${issue.exact ? "exactly" : issue.inclusive === false ? beyond : within} ${limit}`;
}

/** What a value is, in the words a message uses: "text", "a number", "a list"… */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return "text";
  if (typeof value === "object") return "an object";
  return TYPE_WORDS[typeof value] ?? typeof value;
}

function quoted(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
