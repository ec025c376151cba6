/**
 * A `fetch` for upstream MCP servers that refuses forbidden destinations: the URL is checked, the host
 * resolved once and every address vetted, the connection pinned to those addresses, and every redirect
 * hop checked the same way. Pass it as the `fetch` option of the SDK's client transports.
 */
import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import {
  type AddressPolicy,
  checkUrl,
  classifyAddress,
  describeClass,
  isForbidden,
  parseHostLiteral,
} from "./address-policy";
import { createPinnedFetch, type HopFetch, type HopInit, type SocketLimits } from "./pinned-fetch";

/** Most redirects one call follows (with the default `redirect: "follow"`). */
export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** IP-literal hosts remembered as vetted (past it the memory starts over). */
const MAX_VETTED_LITERALS = 1_024;
/** Dropped when a redirect turns the request into a body-less GET (as fetch does). */
const BODY_HEADERS = [
  "content-type",
  "content-encoding",
  "content-language",
  "content-location",
  "content-length",
];
/** Dropped when a redirect leaves the origin (fetch drops `authorization`; cookies are ours to drop too). */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];

/** Resolves a hostname to all its addresses, like `dns.lookup(host, { all: true })`. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** Options of {@link createGuardedFetch}. */
export interface GuardedFetchOptions extends AddressPolicy {
  /** Sends one vetted hop; defaults to node:http(s) pinned to the vetted addresses ({@link createPinnedFetch}). */
  fetchImpl?: HopFetch;
  /** Bounds of the default hop's sockets per upstream origin (defaults: `DEFAULT_SOCKET_LIMITS`). */
  sockets?: Partial<SocketLimits>;
  /** DNS resolver; defaults to `dns.lookup(host, { all: true })`. Injectable for tests. */
  lookup?: Resolver;
}

/** Thrown when the guard refuses a destination. The message names the host, never a header value. */
export class ForbiddenAddressError extends Error {
  override readonly name = "ForbiddenAddressError";

  constructor(
    /** The refused URL's host (empty for scheme-less-host URLs such as `file:///…`). */
    readonly host: string,
    /** Why: a non-http(s) scheme, or an address the policy forbids. */
    readonly reason: "scheme" | "forbidden_address",
    detail: string,
  ) {
    super(`forbidden address: ${detail}`);
  }
}

/**
 * Creates a guarded `fetch`. http(s) only; metadata, link-local and unspecified addresses are always
 * refused, loopback and private ones unless `allowPrivate`; a host is refused if ANY address it resolves
 * to is forbidden. Redirects are followed here (max {@link MAX_REDIRECTS}), re-vetting each hop; with
 * `redirect: "manual"` the 3xx response is returned as is (the SDK follows it by calling this fetch again).
 * Request bodies are buffered (MCP messages are small); response bodies stream.
 * @throws ForbiddenAddressError on refusal; TypeError on network/DNS failure, like fetch.
 */
export function createGuardedFetch(options: GuardedFetchOptions): typeof fetch {
  const policy: AddressPolicy = { allowPrivate: options.allowPrivate };
  const sendHop = options.fetchImpl ?? createPinnedFetch(options.sockets);
  const resolve: Resolver = options.lookup ?? ((hostname) => lookup(hostname, { all: true }));

  /** Hosts that are IP literals, already vetted: their answer never changes under one policy. */
  const vettedLiterals = new Map<string, LookupAddress[]>();

  /** Checks the URL, resolves its host once, and returns the addresses the connection may use. */
  async function vet(url: URL): Promise<LookupAddress[]> {
    const known = vettedLiterals.get(`${url.protocol}//${url.hostname}`);
    if (known) return known;
    const check = checkUrl(url, policy);
    if (!check.ok) {
      if (check.reason === "invalid") throw new TypeError(check.message);
      throw new ForbiddenAddressError(url.hostname, check.reason, check.message);
    }
    const literal = parseHostLiteral(url.hostname);
    const addresses = literal
      ? [{ address: literal, family: isIP(literal) }]
      : await resolveHost(url.hostname);
    for (const { address } of addresses) {
      if (isForbidden(address, policy)) {
        const detail = `${url.hostname} resolves to ${address}, ${describeClass(classifyAddress(address))}`;
        throw new ForbiddenAddressError(url.hostname, "forbidden_address", detail);
      }
    }
    if (literal) {
      if (vettedLiterals.size >= MAX_VETTED_LITERALS) vettedLiterals.clear();
      vettedLiterals.set(`${url.protocol}//${url.hostname}`, addresses);
    }
    return addresses;
  }

  async function resolveHost(hostname: string): Promise<LookupAddress[]> {
    let addresses: LookupAddress[];
    try {
      addresses = await resolve(hostname);
    } catch (error) {
      throw new TypeError("fetch failed", { cause: error });
    }
    if (addresses.length === 0) throw new TypeError(`fetch failed: no address for ${hostname}`);
    return addresses;
  }

  return async function guardedFetch(input, init) {
    const request = await fetchParts(input, init);
    let url = request.url;
    let hop: HopInit = {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
      redirect: "manual",
    };
    for (let redirects = 0; ; redirects++) {
      const addresses = await vet(url);
      request.signal?.throwIfAborted();
      const response = await sendHop(url, hop, addresses);
      const target = redirectTarget(response, url);
      if (target === null) return markRedirected(response, redirects > 0);
      if (request.redirect === "manual") {
        // The caller follows it (or not) itself; a target the policy forbids is refused right here,
        // so every refusal reads the same, whoever would have followed it.
        const check = checkUrl(target, policy);
        if (check.ok || check.reason === "invalid") return markRedirected(response, redirects > 0);
        await response.body?.cancel();
        throw new ForbiddenAddressError(target.hostname, check.reason, `redirect to ${check.message}`);
      }
      await response.body?.cancel();
      if (request.redirect === "error") throw new TypeError("fetch failed: unexpected redirect");
      if (redirects === MAX_REDIRECTS) throw new TypeError("fetch failed: too many redirects");
      hop = redirectedHop(hop, response.status, url, target);
      url = target;
    }
  };
}

/** One fetch call's request, normalised as `fetch` would. */
export interface FetchParts {
  url: URL;
  method: string;
  /** The caller's own `Headers` when it passed one: read, never changed (copy before changing). */
  headers: Headers;
  /** Buffered: MCP messages are small. */
  body: Uint8Array | null;
  /** The caller's own signal (no `Request` follows it: nothing is added to a long-lived signal). */
  signal: AbortSignal | null;
  redirect: NonNullable<RequestInit["redirect"]>;
}

/** Methods fetch upper-cases; the ones it refuses. */
const NORMALISED_METHODS = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * What `new Request(input, init)` would hold — method, headers (with the content type a body
 * implies), body bytes, signal, redirect mode — read without making one: a `Request` made with a
 * signal follows it with a listener that stays until the `Request` is garbage-collected, so one
 * made per call piles listeners onto a session's long-lived signal (and costs a web-stream body).
 * @throws TypeError where fetch would (a bad URL or method, a body on GET/HEAD).
 */
export async function fetchParts(
  input: Parameters<typeof fetch>[0],
  init: RequestInit = {},
): Promise<FetchParts> {
  if (typeof input !== "string" && !(input instanceof URL)) return requestParts(input, init);
  const url = new URL(input);
  const method = normaliseMethod(init.method ?? "GET");
  if (init.body != null && (method === "GET" || method === "HEAD"))
    throw new TypeError("Request with GET/HEAD method cannot have body.");
  const { body, contentType } = await bodyBytes(init.body ?? null);
  // The caller's Headers are used as they are (read, never changed); a content type to add needs a copy.
  let headers = init.headers instanceof Headers ? init.headers : new Headers(init.headers);
  if (contentType && !headers.has("content-type")) {
    headers = new Headers(headers);
    headers.set("content-type", contentType);
  }
  return { url, method, headers, body, signal: init.signal ?? null, redirect: init.redirect ?? "follow" };
}

/** The parts of a `Request` given as the input (no listener on its signal: it is read, not followed). */
async function requestParts(input: Request, init: RequestInit): Promise<FetchParts> {
  const { signal: ownSignal, ...rest } = init;
  const request = Object.keys(rest).length > 0 ? new Request(input, { ...rest, signal: null }) : input;
  return {
    url: new URL(request.url),
    method: request.method,
    headers: new Headers(request.headers),
    body: request.body ? new Uint8Array(await request.arrayBuffer()) : null,
    signal: ownSignal !== undefined ? ownSignal : input.signal,
    redirect: request.redirect,
  };
}

function normaliseMethod(method: string): string {
  const upper = method.toUpperCase();
  if (FORBIDDEN_METHODS.has(upper)) throw new TypeError(`'${method}' HTTP method is unsupported.`);
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(method))
    throw new TypeError(`'${method}' is not a valid HTTP method.`);
  return NORMALISED_METHODS.has(upper) ? upper : method;
}

/** A body as bytes, and the content type it implies (fetch's, for when the caller set none). */
async function bodyBytes(
  body: RequestInit["body"],
): Promise<{ body: Uint8Array | null; contentType?: string | undefined }> {
  if (body === null || body === undefined) return { body: null };
  if (typeof body === "string")
    return { body: Buffer.from(body, "utf8"), contentType: "text/plain;charset=UTF-8" };
  if (body instanceof ArrayBuffer) return { body: new Uint8Array(body.slice(0)) };
  if (ArrayBuffer.isView(body))
    return { body: new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)) };
  // Blob, FormData, URLSearchParams, a stream: as a Response would read it, with its content type.
  const response = new Response(body);
  const contentType = response.headers.get("content-type") ?? undefined;
  return { body: new Uint8Array(await response.arrayBuffer()), contentType };
}

/** The URL a redirect response points to, or null if it is not a redirect to follow. */
function redirectTarget(response: Response, base: URL): URL | null {
  const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get("location") : null;
  if (location === null) return null;
  try {
    return new URL(location, base);
  } catch (error) {
    throw new TypeError("fetch failed: invalid redirect location", { cause: error });
  }
}

/** The next hop's request, rewritten the way fetch rewrites it for a redirect. */
function redirectedHop(hop: HopInit, status: number, from: URL, to: URL): HopInit {
  const headers = new Headers(hop.headers);
  let { method, body } = hop;
  const becomesGet =
    (status === 303 && method !== "GET" && method !== "HEAD") ||
    ((status === 301 || status === 302) && method === "POST");
  if (becomesGet) {
    method = "GET";
    body = null;
    for (const name of BODY_HEADERS) headers.delete(name);
  }
  if (from.origin !== to.origin) {
    for (const name of CREDENTIAL_HEADERS) headers.delete(name);
  }
  return { ...hop, method, headers, body };
}

function markRedirected(response: Response, redirected: boolean): Response {
  if (redirected) Object.defineProperty(response, "redirected", { value: true });
  return response;
}
