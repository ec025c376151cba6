/**
 * Outbound address policy: which IP addresses an upstream connection may reach.
 * Pure functions, no network access. See DESIGN.md "Outbound safety".
 */
import { isIP } from "node:net";
import { domainToASCII } from "node:url";

/** What kind of destination an IP address is. */
export type AddressClass = "metadata" | "link_local" | "loopback" | "private" | "public" | "unspecified";

/** Deployment setting: may upstreams live on loopback / private networks? */
export interface AddressPolicy {
  allowPrivate: boolean;
}

/** Result of {@link checkUrl}. `message` names the host only, never the full URL (it may carry secrets). */
export type UrlCheckResult =
  | { ok: true; url: URL }
  | { ok: false; reason: "scheme" | "forbidden_address" | "invalid"; message: string };

type Range<T> = readonly [base: T, prefixLength: number, cls: AddressClass];

/** First match wins, so the specific metadata addresses come before the ranges that contain them. */
const IPV4_RANGES: readonly Range<number>[] = [
  v4("169.254.169.254/32", "metadata"), // AWS, GCP, Azure, OCI, DigitalOcean…
  v4("169.254.170.2/32", "metadata"), // AWS ECS task credentials
  v4("169.254.170.23/32", "metadata"), // AWS EKS Pod Identity
  v4("100.100.100.200/32", "metadata"), // Alibaba Cloud (inside CGNAT space)
  v4("0.0.0.0/8", "unspecified"),
  v4("127.0.0.0/8", "loopback"),
  v4("169.254.0.0/16", "link_local"),
  v4("10.0.0.0/8", "private"),
  v4("172.16.0.0/12", "private"),
  v4("192.168.0.0/16", "private"),
  v4("100.64.0.0/10", "private"), // CGNAT
  v4("198.18.0.0/15", "private"), // benchmarking, used as internal space
  v4("224.0.0.0/4", "unspecified"), // multicast: not a unicast destination
  v4("240.0.0.0/4", "unspecified"), // reserved + broadcast
];

const IPV6_RANGES: readonly Range<bigint>[] = [
  v6("fd00:ec2::254/128", "metadata"), // AWS IMDS over IPv6
  v6("fd00:ec2::23/128", "metadata"), // AWS EKS Pod Identity over IPv6
  v6("::/128", "unspecified"),
  v6("::1/128", "loopback"),
  v6("fe80::/10", "link_local"),
  v6("fc00::/7", "private"), // unique local
  v6("fec0::/10", "private"), // deprecated site-local
  v6("64:ff9b:1::/48", "private"), // local-use NAT64 (RFC 8215)
  v6("ff00::/8", "unspecified"), // multicast
];

/** IPv6 ranges that carry an IPv4 address; classified by that address. `shift` locates its 32 bits. */
const IPV4_EMBEDDING: readonly (readonly [base: bigint, prefixLength: number, shift: bigint])[] = [
  [parseIPv6("::ffff:0:0"), 96, 0n], // IPv4-mapped
  [parseIPv6("::ffff:0:0:0"), 96, 0n], // IPv4-translated (SIIT)
  [parseIPv6("64:ff9b::"), 96, 0n], // NAT64 well-known prefix
  [parseIPv6("::"), 96, 0n], // deprecated IPv4-compatible
  [parseIPv6("2002::"), 16, 80n], // 6to4
];

/**
 * Classifies an IP address (any spelling {@link parseHostLiteral} accepts).
 * IPv4-mapped, NAT64, IPv4-compatible and 6to4 IPv6 addresses are classified by their embedded IPv4.
 * @throws TypeError if `ip` is not an IP address.
 */
export function classifyAddress(ip: string): AddressClass {
  const literal = parseHostLiteral(ip);
  if (literal === null) throw new TypeError(`not an IP address: ${JSON.stringify(ip)}`);
  return isIP(literal) === 4 ? classifyIPv4(parseDottedIPv4(literal)) : classifyIPv6(parseIPv6(literal));
}

/** Metadata, link-local and unspecified are always forbidden; loopback and private unless `allowPrivate`. */
export function isForbidden(ip: string, { allowPrivate }: AddressPolicy): boolean {
  const cls = classifyAddress(ip);
  if (cls === "public") return false;
  if (cls === "loopback" || cls === "private") return !allowPrivate;
  return true;
}

/**
 * Recognises an IP literal in a host string, in every spelling WHATWG URL parsing and inet_aton accept:
 * dotted, integer (2852039166), hex (0xa9fea9fe), octal (0251.0376.0251.0376), short forms
 * (169.254.43518), full-width digits, trailing dot, and IPv6 with or without brackets.
 * @returns the IPv4 address in dotted-quad form, or the IPv6 address lower-cased without brackets;
 *   `null` when `host` is not an IP literal (i.e. a name that needs DNS).
 */
export function parseHostLiteral(host: string): string | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIP(bare) === 6) return bare.toLowerCase();
  if (bare !== host) return null;
  // domainToASCII applies the URL host mapping (full-width digits, ideographic dots…); "" if it rejects.
  const value = parseWhatwgIPv4(domainToASCII(host) || host);
  return value === null ? null : formatIPv4(value);
}

/**
 * Static check of an upstream URL before any DNS: http(s) only, and an IP-literal host (any spelling,
 * plus `localhost` / `*.localhost`) must be allowed by the policy. Hostnames pass; vet them after DNS.
 */
export function checkUrl(url: string | URL, policy: AddressPolicy): UrlCheckResult {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: "invalid", message: "invalid URL" };
  }
  const host = parsed.hostname;
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    const message = `scheme ${parsed.protocol} is not allowed${host ? ` for ${host}` : ""} (http: or https: only)`;
    return { ok: false, reason: "scheme", message };
  }
  const address = isLocalhostName(host) ? "127.0.0.1" : parseHostLiteral(host);
  if (address !== null && isForbidden(address, policy)) {
    return {
      ok: false,
      reason: "forbidden_address",
      message: `${host} is ${describeClass(classifyAddress(address))}`,
    };
  }
  return { ok: true, url: parsed };
}

/** Human wording for an address class, used in refusal messages. */
export function describeClass(cls: AddressClass): string {
  switch (cls) {
    case "metadata":
      return "a cloud metadata address";
    case "link_local":
      return "a link-local address";
    case "loopback":
      return "a loopback address";
    case "private":
      return "a private-network address";
    case "unspecified":
      return "an unspecified or reserved address";
    case "public":
      return "a public address";
  }
}

/** `localhost` and `*.localhost` always mean loopback (RFC 6761), whatever DNS says. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost");
}

function classifyIPv4(value: number): AddressClass {
  for (const [base, prefixLength, cls] of IPV4_RANGES) {
    const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
    if ((value & mask) >>> 0 === base) return cls;
  }
  return "public";
}

function classifyIPv6(value: bigint): AddressClass {
  for (const [base, prefixLength, cls] of IPV6_RANGES) {
    if (inPrefix(value, base, prefixLength)) return cls;
  }
  for (const [base, prefixLength, shift] of IPV4_EMBEDDING) {
    if (inPrefix(value, base, prefixLength)) return classifyIPv4(Number((value >> shift) & 0xffffffffn));
  }
  return "public";
}

function inPrefix(value: bigint, base: bigint, prefixLength: number): boolean {
  const shift = BigInt(128 - prefixLength);
  return value >> shift === base >> shift;
}

/**
 * The WHATWG URL IPv4 parser (https://url.spec.whatwg.org/#concept-ipv4-parser), which also matches
 * inet_aton: 1–4 parts, each decimal, 0x-hex or 0-octal; the last part fills the remaining bytes.
 */
function parseWhatwgIPv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length > 1 && parts.at(-1) === "") parts.pop();
  if (parts.length > 4) return null;
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Number(part);
    if (n === null) return null;
    numbers.push(n);
  }
  const last = numbers.pop() ?? 0;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return null;
  return numbers.reduce((acc, n, i) => acc + n * 256 ** (3 - i), last);
}

function parseIPv4Number(part: string): number | null {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return Number.parseInt(part.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number.parseInt(part, 10);
  return null;
}

function parseDottedIPv4(ip: string): number {
  return ip.split(".").reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join(".");
}

/** Parses an IPv6 address already validated by `isIP` (a zone index, if any, is ignored) to 128 bits. */
function parseIPv6(ip: string): bigint {
  let text = ip.split("%")[0] ?? "";
  const dotted = text.lastIndexOf(":") < text.indexOf(".");
  if (dotted) {
    // Trailing dotted IPv4 ("::ffff:1.2.3.4") → two hex groups.
    const cut = text.lastIndexOf(":") + 1;
    const v4 = parseDottedIPv4(text.slice(cut));
    text = `${text.slice(0, cut)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill("0");
  return [...headGroups, ...zeros, ...tailGroups].reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n);
}

function v4(cidr: string, cls: AddressClass): Range<number> {
  const [ip = "", length = ""] = cidr.split("/");
  return [parseDottedIPv4(ip), Number(length), cls];
}

function v6(cidr: string, cls: AddressClass): Range<bigint> {
  const [ip = "", length = ""] = cidr.split("/");
  return [parseIPv6(ip), Number(length), cls];
}
