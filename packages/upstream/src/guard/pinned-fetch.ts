/**
 * One HTTP request over node:http(s) to addresses that were already vetted: DNS is never consulted
 * again, so a rebinding resolver cannot swap the address between the check and the connection.
 */
import type { LookupAddress } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP, type LookupFunction, type Socket } from "node:net";
import { Readable } from "node:stream";
import { appendRawHeaders, BufferedResponse } from "../buffered-response";
import { whenAborted } from "../when-aborted";

/** The request of one hop, as {@link createGuardedFetch} hands it to a {@link HopFetch}. */
export interface HopInit extends RequestInit {
  method: string;
  headers: Headers;
  body: Uint8Array | null;
  signal: AbortSignal | null;
  redirect: "manual";
}

/**
 * Sends one request (never following redirects) to `url`, connecting only to `addresses`.
 * A plain `fetch` is assignable (handy in tests) but resolves DNS again, losing rebinding protection.
 */
export type HopFetch = (url: URL, init: HopInit, addresses: readonly LookupAddress[]) => Promise<Response>;

/** How many sockets one fetch keeps per upstream origin. */
export interface SocketLimits {
  /** Sockets open at once per origin for requests; more requests wait for one. */
  maxSockets: number;
  /** Idle keep-alive sockets kept per origin. */
  maxFreeSockets: number;
  /** An idle keep-alive socket is closed after this long (under servers' usual 5 s keep-alive). */
  freeSocketTimeoutMs: number;
}

/**
 * The default bounds: 32 sockets per origin, 4 of them kept idle for 4 s. A burst of calls queues
 * for sockets instead of opening one per call, reuses them while it lasts, and leaves at most 4 open
 * a moment after it ({@link SPARE_SOCKET_IDLE_MS}).
 */
export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  maxSockets: 32,
  maxFreeSockets: 4,
  freeSocketTimeoutMs: 4_000,
};

/**
 * Creates the default {@link HopFetch}: node:http(s) whose socket `lookup` answers with the vetted
 * addresses (Node still does happy-eyeballs across them). The hostname stays the request's host, so the
 * Host header, TLS SNI and certificate verification all use the original name. Keep-alive sockets are
 * pooled per instance, so create one per guarded fetch and reuse it.
 *
 * Requests share keep-alive agents capped by `limits` per origin. A session's standing event stream
 * (GET `text/event-stream`: one per MCP session, open as long as it lives) gets a connection of its
 * own outside the cap, so open sessions can never take every socket and starve their own calls.
 */
export function createPinnedFetch(limits: Partial<SocketLimits> = {}): HopFetch {
  return createNodeFetch(limits);
}

/**
 * The node:http(s) fetch behind {@link createPinnedFetch}; with `addresses` undefined it resolves DNS
 * itself (the deployment's own endpoints, which need no vetting).
 */
export function createNodeFetch(
  limits: Partial<SocketLimits> = {},
): (url: URL, init: HopInit, addresses: readonly LookupAddress[] | undefined) => Promise<Response> {
  const { maxSockets, maxFreeSockets, freeSocketTimeoutMs } = { ...DEFAULT_SOCKET_LIMITS, ...limits };
  // Every socket may go back to the pool (no connection churn at steady concurrency); past the few
  // kept idle, spares close soon after they idle (keepFew).
  const pooled = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: freeSocketTimeoutMs };
  const agents = { http: new http.Agent(pooled), https: new https.Agent(pooled) };
  for (const agent of Object.values(agents)) keepFew(agent, maxFreeSockets);
  // Uncapped, and kept alive (a `Connection: close` on a standing stream trips up naive proxies that
  // forward hop-by-hop headers); at most one kept idle, as briefly as the others.
  const standing = { keepAlive: true, maxFreeSockets: 1, timeout: freeSocketTimeoutMs };
  const streams = { http: new http.Agent(standing), https: new https.Agent(standing) };

  return (url, init, addresses) =>
    new Promise<Response>((resolve, reject) => {
      const { signal } = init;
      if (signal?.aborted) return reject(signal.reason);
      const secure = url.protocol === "https:";
      const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
      const headers = Object.fromEntries(init.headers);
      delete headers["transfer-encoding"];
      headers.host = url.host;
      headers["accept-encoding"] = "identity"; // bodies are passed through undecoded
      headers.accept ??= "*/*";
      if (init.body) headers["content-length"] = String(init.body.byteLength);

      const stream = init.method === "GET" && /text\/event-stream/i.test(headers.accept ?? "");
      const pool = stream ? streams : agents;
      const request = (secure ? https : http).request({
        agent: secure ? pool.https : pool.http,
        host,
        port: url.port || (secure ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: init.method,
        headers,
        ...(addresses ? { lookup: pinnedLookup(addresses) } : {}),
        ...(secure && isIP(host) === 0 ? { servername: host } : {}),
      });

      let response: IncomingMessage | undefined;
      const onAbort = () => {
        response?.destroy(signal?.reason);
        request.destroy(signal?.reason);
      };
      const cleanup = signal ? whenAborted(signal, onAbort) : () => {};

      request.on("error", (error) => {
        cleanup();
        reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
      });
      request.on("response", (res) => {
        response = res;
        // Once the whole answer is in, an abort has nothing left to stop (as with fetch): a signal that
        // aborts later must not close a socket that went back to the pool.
        res.once("end", cleanup);
        res.once("close", cleanup);
        // After the read that brought the headers is parsed whole: a body that came with them is complete.
        queueMicrotask(() => {
          try {
            if (res.complete) cleanup();
            resolve(toResponse(res, url, init.method));
          } catch (error) {
            res.destroy();
            reject(new TypeError("fetch failed", { cause: error })); // e.g. a status outside 200–599
          }
        });
      });
      request.end(init.body ?? undefined);
    });
}

/** How long a pool stays quiet (no socket freed) before its spare idle sockets close. */
export const SPARE_SOCKET_IDLE_MS = 100;

/**
 * Keeps `kept` idle sockets per origin for the agent's timeout; the rest of a burst's sockets are
 * spares: reused while calls keep coming (the pool hands out the most recently freed first), closed
 * once the pool has been quiet for {@link SPARE_SOCKET_IDLE_MS} with no call in flight to their origin
 * — the burst is over. Quiet is judged by the pool, not each socket, so a busy event loop never trims
 * sockets a burst still uses.
 */
function keepFew(agent: http.Agent, kept: number): void {
  let lastFreed = 0;
  let sweep: NodeJS.Timeout | undefined;
  const trim = () => {
    sweep = undefined;
    const quietFor = performance.now() - lastFreed;
    if (quietFor < SPARE_SOCKET_IDLE_MS) return schedule(SPARE_SOCKET_IDLE_MS - quietFor);
    for (const [name, idle] of Object.entries(agent.freeSockets)) {
      // Calls still in flight on this origin: the burst is not over (a stalled event loop only looks quiet).
      if ((agent.sockets[name]?.length ?? 0) > 0) {
        schedule(SPARE_SOCKET_IDLE_MS);
        continue;
      }
      // Oldest first: all but the last `kept` (the most recently used) are spares.
      for (const socket of (idle ?? []).slice(0, Math.max(0, (idle?.length ?? 0) - kept))) socket.destroy();
    }
  };
  const schedule = (ms: number) => {
    sweep ??= setTimeout(trim, ms);
    sweep.unref();
  };
  agent.on("free", (_socket: Socket, options: http.ClientRequestArgs) => {
    lastFreed = performance.now();
    if ((agent.freeSockets[agent.getName(options)]?.length ?? 0) > kept) schedule(SPARE_SOCKET_IDLE_MS);
  });
}

/** A socket `lookup` that never queries DNS: it answers with the addresses vetted beforehand. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const [first] = addresses;
    process.nextTick(() => {
      if (!first) callback(Object.assign(new Error("no vetted address"), { code: "ENOTFOUND" }), "");
      else if (options.all) callback(null, [...addresses]);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Wraps the node response as a fetch `Response`: a {@link BufferedResponse} when the whole answer is
 * already here (the usual small MCP message), else one whose body streams as it arrives.
 */
function toResponse(res: IncomingMessage, url: URL, method: string): Response {
  const status = res.statusCode ?? 0;
  const statusText = res.statusMessage ?? "";
  const href = url.href.replace(/#.*$/, "");
  const hasBody = method !== "HEAD" && status !== 204 && status !== 205 && status !== 304;
  if (hasBody && res.complete)
    return new BufferedResponse(readAll(res), { status, statusText, rawHeaders: res.rawHeaders, url: href });
  if (!hasBody) res.resume();
  const body = hasBody ? (Readable.toWeb(res) as ReadableStream<Uint8Array>) : null;
  const headers = new Headers();
  appendRawHeaders(headers, res.rawHeaders);
  const response = new Response(body, { status, statusText, headers });
  Object.defineProperty(response, "url", { value: href });
  return response;
}

/** Everything a complete response holds (reading it to its end frees the socket). */
function readAll(res: IncomingMessage): Uint8Array {
  const chunks: Buffer[] = [];
  for (let chunk = res.read() as Buffer | null; chunk !== null; chunk = res.read() as Buffer | null)
    chunks.push(chunk);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}
