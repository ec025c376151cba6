/**
 * Outbound address policy: which IP addresses an upstream connection may reach.
 * Pure functions, no network access. See docs/architecture.md "The outbound guard".
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

/** How the guard treats a special-purpose range: one address class, or "classify by the IPv4 inside". */
export type RangeTreatment = AddressClass | "embedded_ipv4";

/**
 * One row of a special-purpose address table: the block, the registry's name and reference for it, and
 * how the guard treats it. `embedded_ipv4` (IPv6 only) classifies an address by the 32 bits right after
 * the prefix, read as IPv4: the RFC 6052 /96 layout and 6to4's 2002:AABB:CCDD::/48.
 */
export interface SpecialRange<T extends RangeTreatment = RangeTreatment> {
  readonly cidr: string;
  readonly name: string;
  readonly rfc: string;
  readonly treatment: T;
}

/*
 * Classification choices, for the rows below.
 * - No row is public, so every special-purpose address is refused at least without `allowPrivate`. Only
 *   blocks that mean "this host" or "this organisation's network" are loopback / private (reachable with
 *   `allowPrivate`, for dev and on-premises upstreams).
 * - Everything else is "unspecified", i.e. reserved and always refused: documentation, benchmarking,
 *   discard, dummy, protocol-reserved and broadcast blocks, and also the registries' "Globally Reachable"
 *   anycast and service blocks (PCP, TURN, DNS-SD SRP, AMT, AS112, ORCHIDv2, DETs). Those reach the
 *   nearest PCP/TURN server, AMT relay or DNS sink, typically the operator's infrastructure next to the
 *   gateway; none can host an MCP server over HTTP(S), so refusing them costs nothing.
 * - Teredo (2001::/32) is refused outright: it tunnels to an IPv4 host the guard cannot vet.
 * - Blocks that embed an IPv4 destination (IPv4-mapped, the NAT64 well-known prefix, 6to4) are classified
 *   by that IPv4 address, so ::ffff:169.254.169.254 is metadata and 64:ff9b::8.8.8.8 is public.
 * - 198.18.0.0/15 stays private rather than reserved: fake-IP DNS proxies (e.g. Clash) and some internal
 *   networks use it, so dev machines with `allowPrivate` must be able to reach it.
 * Rows overlap (192.0.0.0/24 holds 192.0.0.9/32); the most specific row containing an address wins, so
 * the tables can follow the registries' order.
 */

/**
 * The IANA IPv4 Special-Purpose Address Registry, row for row in registry order
 * (https://www.iana.org/assignments/iana-ipv4-special-registry, 2025).
 */
export const IPV4_SPECIAL_REGISTRY: readonly SpecialRange<AddressClass>[] = [
  row("0.0.0.0/8", '"This network"', "RFC 791 §3.2", "unspecified"),
  row("0.0.0.0/32", '"This host on this network"', "RFC 1122 §3.2.1.3", "unspecified"),
  row("10.0.0.0/8", "Private-Use", "RFC 1918", "private"),
  row("100.64.0.0/10", "Shared Address Space", "RFC 6598", "private"), // CGNAT
  row("127.0.0.0/8", "Loopback", "RFC 1122 §3.2.1.3", "loopback"),
  row("169.254.0.0/16", "Link Local", "RFC 3927", "link_local"),
  row("172.16.0.0/12", "Private-Use", "RFC 1918", "private"),
  row("192.0.0.0/24", "IETF Protocol Assignments", "RFC 6890 §2.1", "unspecified"),
  row("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC 7335", "unspecified"),
  row("192.0.0.8/32", "IPv4 dummy address", "RFC 7600", "unspecified"),
  row("192.0.0.9/32", "Port Control Protocol Anycast", "RFC 7723", "unspecified"), // Globally Reachable
  row("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC 8155", "unspecified"), // ditto
  // The registry lists 192.0.0.170/32 and 192.0.0.171/32 on one line.
  row("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", "unspecified"),
  row("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC 8880, RFC 7050 §2.2", "unspecified"),
  row("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737", "unspecified"),
  row("192.31.196.0/24", "AS112-v4", "RFC 7535", "unspecified"), // Globally Reachable
  row("192.52.193.0/24", "AMT", "RFC 7450", "unspecified"), // Globally Reachable
  row("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC 7526", "unspecified"),
  row("192.168.0.0/16", "Private-Use", "RFC 1918", "private"),
  row("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534", "unspecified"), // Globally Reachable
  row("198.18.0.0/15", "Benchmarking", "RFC 2544", "private"), // see above: fake-IP / internal space
  row("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737", "unspecified"),
  row("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737", "unspecified"),
  row("240.0.0.0/4", "Reserved", "RFC 1112 §4", "unspecified"),
  row("255.255.255.255/32", "Limited Broadcast", "RFC 8190, RFC 919 §7", "unspecified"),
];

/** IPv4 ranges the guard adds to the registry: cloud metadata endpoints and multicast. */
export const IPV4_GUARD_RANGES: readonly SpecialRange<AddressClass>[] = [
  row("169.254.169.254/32", "Instance metadata (AWS, GCP, Azure, OCI, DigitalOcean…)", "", "metadata"),
  row("169.254.170.2/32", "AWS ECS task metadata and credentials", "", "metadata"),
  row("169.254.170.23/32", "AWS EKS Pod Identity", "", "metadata"),
  row("100.100.100.200/32", "Alibaba Cloud instance metadata (in shared address space)", "", "metadata"),
  row("224.0.0.0/4", "Multicast: not a unicast destination", "RFC 5771", "unspecified"),
];

/**
 * The IANA IPv6 Special-Purpose Address Registry, row for row in registry order
 * (https://www.iana.org/assignments/iana-ipv6-special-registry, 2025).
 */
export const IPV6_SPECIAL_REGISTRY: readonly SpecialRange[] = [
  row("::1/128", "Loopback Address", "RFC 4291", "loopback"),
  row("::/128", "Unspecified Address", "RFC 4291", "unspecified"),
  row("::ffff:0:0/96", "IPv4-mapped Address", "RFC 4291", "embedded_ipv4"),
  row("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC 6052", "embedded_ipv4"), // NAT64 well-known prefix
  row("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC 8215", "private"), // local-use NAT64, any layout
  row("100::/64", "Discard-Only Address Block", "RFC 6666", "unspecified"),
  row("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC 9780", "unspecified"),
  row("2001::/23", "IETF Protocol Assignments", "RFC 2928", "unspecified"),
  row("2001::/32", "TEREDO", "RFC 4380, RFC 8190", "unspecified"), // see above: refused outright
  row("2001:1::1/128", "Port Control Protocol Anycast", "RFC 7723", "unspecified"), // Globally Reachable
  row("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC 8155", "unspecified"), // ditto
  row("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC 9665", "unspecified"), // ditto
  row("2001:2::/48", "Benchmarking", "RFC 5180, RFC Errata 1752", "unspecified"),
  row("2001:3::/32", "AMT", "RFC 7450", "unspecified"), // Globally Reachable
  row("2001:4:112::/48", "AS112-v6", "RFC 7535", "unspecified"), // Globally Reachable
  row("2001:10::/28", "Deprecated (previously ORCHID)", "RFC 4843", "unspecified"),
  // ORCHIDv2 and DETs are Globally Reachable, but are identifiers (HIP), not locators.
  row("2001:20::/28", "ORCHIDv2", "RFC 7343", "unspecified"),
  row("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC 9374", "unspecified"),
  row("2001:db8::/32", "Documentation", "RFC 3849", "unspecified"),
  row("2002::/16", "6to4", "RFC 3056", "embedded_ipv4"),
  // Globally Reachable, like 192.175.48.0/24.
  row("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534", "unspecified"),
  row("3fff::/20", "Documentation", "RFC 9637", "unspecified"),
  row("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC 9602", "unspecified"),
  row("fc00::/7", "Unique-Local", "RFC 4193, RFC 8190", "private"),
  row("fe80::/10", "Link-Local Unicast", "RFC 4291", "link_local"),
];

/** IPv6 ranges the guard adds to the registry: metadata endpoints, older IPv4 embeddings, multicast. */
export const IPV6_GUARD_RANGES: readonly SpecialRange[] = [
  row("fd00:ec2::254/128", "AWS instance metadata over IPv6", "", "metadata"),
  row("fd00:ec2::23/128", "AWS EKS Pod Identity over IPv6", "", "metadata"),
  row("::/96", "IPv4-compatible (deprecated)", "RFC 4291 §2.5.5.1", "embedded_ipv4"),
  row("::ffff:0:0:0/96", "IPv4-translated (SIIT)", "RFC 2765 §2.1", "embedded_ipv4"),
  row("fec0::/10", "Site-local unicast (deprecated)", "RFC 3879", "private"),
  row("ff00::/8", "Multicast: not a unicast destination", "RFC 4291 §2.7", "unspecified"),
];

interface Prefix<T, C extends RangeTreatment> {
  readonly base: T;
  readonly prefixLength: number;
  readonly treatment: C;
}

const IPV4_PREFIXES = [...IPV4_SPECIAL_REGISTRY, ...IPV4_GUARD_RANGES].map(compileIPv4);
const IPV6_PREFIXES = [...IPV6_SPECIAL_REGISTRY, ...IPV6_GUARD_RANGES].map(compileIPv6);

/**
 * Classifies an IP address (any spelling {@link parseHostLiteral} accepts) by the most specific range of
 * the special-purpose tables that contains it; an address in none of them is public.
 * IPv4-mapped, NAT64, IPv4-compatible, SIIT and 6to4 IPv6 addresses are classified by their embedded IPv4.
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
  const match = mostSpecific(IPV4_PREFIXES, (base, prefixLength) => inPrefixIPv4(value, base, prefixLength));
  return match?.treatment ?? "public";
}

function classifyIPv6(value: bigint): AddressClass {
  const match = mostSpecific(IPV6_PREFIXES, (base, prefixLength) => inPrefixIPv6(value, base, prefixLength));
  if (match === undefined) return "public";
  if (match.treatment !== "embedded_ipv4") return match.treatment;
  const shift = BigInt(128 - match.prefixLength - 32);
  return classifyIPv4(Number((value >> shift) & 0xffffffffn));
}

/** The longest-prefix row that contains the address (`contains` decides), if any. */
function mostSpecific<T, C extends RangeTreatment>(
  prefixes: readonly Prefix<T, C>[],
  contains: (base: T, prefixLength: number) => boolean,
): Prefix<T, C> | undefined {
  let best: Prefix<T, C> | undefined;
  for (const prefix of prefixes) {
    if (
      (best === undefined || prefix.prefixLength > best.prefixLength) &&
      contains(prefix.base, prefix.prefixLength)
    )
      best = prefix;
  }
  return best;
}

function inPrefixIPv4(value: number, base: number, prefixLength: number): boolean {
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  return (value & mask) >>> 0 === base;
}

function inPrefixIPv6(value: bigint, base: bigint, prefixLength: number): boolean {
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

/**
 * Who an address stands for when counting per source: an IPv4 address (also IPv4-mapped IPv6) as
 * itself, an IPv6 address by its /64 (one host may hold a whole /64); anything else as given.
 */
export function sourceKeyOf(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (isIP(ip) === 4 || mapped) return mapped ?? ip;
  if (isIP(ip.split("%")[0] ?? "") !== 6) return ip;
  return `${(parseIPv6(ip) >> 64n).toString(16).padStart(16, "0")}/64`;
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

function row<T extends RangeTreatment>(
  cidr: string,
  name: string,
  rfc: string,
  treatment: T,
): SpecialRange<T> {
  return { cidr, name, rfc, treatment };
}

/** A registry row as a prefix; throws on a typo (host bits set) so a wrong row fails at load. */
function compileIPv4({ cidr, treatment }: SpecialRange<AddressClass>): Prefix<number, AddressClass> {
  const [ip = "", length = ""] = cidr.split("/");
  const base = parseDottedIPv4(ip);
  const prefixLength = Number(length);
  if (isIP(ip) !== 4 || !inPrefixIPv4(base, base, prefixLength)) throw new Error(`bad IPv4 range ${cidr}`);
  return { base, prefixLength, treatment };
}

/** A registry row as a prefix; throws on a typo (host bits set) so a wrong row fails at load. */
function compileIPv6({ cidr, treatment }: SpecialRange): Prefix<bigint, RangeTreatment> {
  const [ip = "", length = ""] = cidr.split("/");
  const base = parseIPv6(ip);
  const prefixLength = Number(length);
  const hostBits = (1n << BigInt(128 - prefixLength)) - 1n;
  if (isIP(ip) !== 6 || (base & hostBits) !== 0n) throw new Error(`bad IPv6 range ${cidr}`);
  return { base, prefixLength, treatment };
}
