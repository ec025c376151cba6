/** Outbound-safety (SSRF) guard for connections to upstream MCP servers. */

export type {
  /** Kind of destination an IP address is: metadata, link_local, loopback, private, public, unspecified. */
  AddressClass,
  /** Deployment policy `{ allowPrivate }`: may upstreams be on loopback / private networks? */
  AddressPolicy,
  /** Result of `checkUrl`: `{ ok: true, url }` or `{ ok: false, reason, message }`. */
  UrlCheckResult,
} from "./address-policy";
export {
  /** Pre-DNS check of an upstream URL: http(s) only, and an IP-literal host must be allowed. */
  checkUrl,
  /** Classifies an IP address (any spelling); IPv4-in-IPv6 forms by their embedded IPv4. */
  classifyAddress,
  /** Whether the policy forbids connecting to an IP address. */
  isForbidden,
  /** Recognises an IP literal in any WHATWG / inet_aton spelling; `null` for a hostname. */
  parseHostLiteral,
  /** A client address as a throttle key: IPv4 as itself, IPv6 by its /64. */
  sourceKeyOf,
} from "./address-policy";
export type {
  /** Options of `createGuardedFetch`: `allowPrivate`, plus injectable `fetchImpl` and `lookup`. */
  GuardedFetchOptions,
  /** DNS resolver contract, like `dns.lookup(host, { all: true })`. */
  Resolver,
} from "./guarded-fetch";
export {
  /** Creates the guarded `fetch` to pass as the SDK client transports' `fetch` option. */
  createGuardedFetch,
  /** Error thrown when the guard refuses a destination (`name === "ForbiddenAddressError"`). */
  ForbiddenAddressError,
  /** Most redirects the guarded fetch follows per call. */
  MAX_REDIRECTS,
} from "./guarded-fetch";
export type {
  /** One request to already-vetted addresses: the `fetchImpl` contract. */
  HopFetch,
  /** The request shape a `HopFetch` receives. */
  HopInit,
  /** Per-origin socket bounds: `maxSockets`, `maxFreeSockets`, `freeSocketTimeoutMs`. */
  SocketLimits,
} from "./pinned-fetch";
export {
  /** The default `HopFetch`: node:http(s) connecting only to the vetted addresses. */
  createPinnedFetch,
  /** The default per-origin socket bounds (32 sockets, 4 kept idle for 4 s). */
  DEFAULT_SOCKET_LIMITS,
} from "./pinned-fetch";
