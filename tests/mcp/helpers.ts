/** Shared helpers of the MCP endpoint suites: keys, SDK clients, raw requests, an auth-adding proxy. */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Stack } from "../gateway/helpers";

/** A client API key as `POST /v1/keys` returns it. */
export interface CreatedKey {
  id: string;
  name: string;
  /** Current names of the servers in scope (null = every server). */
  servers: string[] | null;
  /** Ids of the servers in scope, as bound at creation. */
  serverIds: string[] | null;
  /** The key's own call limits (null: the global ones). */
  rateLimit: { perMinute?: number; burst?: number; concurrent?: number } | null;
  /** Who the key belongs to (`user:<name>` / `group:<name>`); null = no owner. */
  owner: string | null;
  key: string;
  createdAt: string;
}

/** Creates a client API key through the admin API (asserts 201); `servers` are names or ids. */
export async function createKey(stack: Stack, name: string, servers?: string[]): Promise<CreatedKey> {
  const created = await stack.call("POST", "/v1/keys", { name, ...(servers ? { servers } : {}) });
  if (created.status !== 201)
    throw new Error(`POST /v1/keys → ${created.status} ${JSON.stringify(created.body)}`);
  return created.body as CreatedKey;
}

/** An SDK client connected to `url` with `Authorization: Bearer <key>` (and any extra headers). */
export async function connectClient(
  url: string,
  key: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: "mcp-gateway-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

/** Every tool of an MCP endpoint, following `nextCursor`; also reports the page sizes. */
export async function listAllTools(client: Client): Promise<{ tools: Tool[]; pages: number[] }> {
  const tools: Tool[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    pages.push(page.tools.length);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 50);
  return { tools, pages };
}

/** The JSON-RPC `initialize` request body. */
export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-e2e", version: "1.0.0" },
  },
};

/** A parsed JSON response body: tests index into it freely. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not type-checked
type Json = any;

/**
 * A raw HTTP request with node:http (fetch cannot set `Host`): status, headers and the parsed body
 * (JSON, else text).
 */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    /** A body sent as it is (JSON's content type unless `headers` name another), instead of `body`. */
    rawBody?: string;
    /** The address to send from (e.g. 127.0.0.2: another source on loopback). */
    localAddress?: string;
  } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Json; text: string }> {
  const target = new URL(url);
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? (payload === undefined ? "GET" : "POST"),
        headers: {
          accept: "application/json, text/event-stream",
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          ...options.headers,
        },
        timeout: 10_000,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const sse = String(res.headers["content-type"] ?? "").startsWith("text/event-stream");
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: sse ? lastSseMessage(text) : parsed(text),
            text,
          });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`request to ${url} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

function parsed(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/** The last JSON-RPC message of an SSE body (a request's response comes last, after its notifications). */
function lastSseMessage(text: string): unknown {
  const data = [...text.matchAll(/^data: ?(.*)$/gm)].map((match) => match[1] ?? "").filter(Boolean);
  return data.length > 0 ? parsed(data[data.length - 1] ?? "") : text;
}

/** A running local proxy. */
export interface AuthProxy {
  /** `http://127.0.0.1:<port>` + the target URL's path. */
  url: string;
  /** Requests forwarded so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/**
 * A tiny 127.0.0.1 reverse proxy to `target` that adds `headers` (e.g. an Authorization header a
 * client cannot send) and forwards everything else unchanged — `Host` and `Origin` included, so the
 * gateway's DNS-rebinding checks see what the client sent. Streams both ways.
 */
export async function startAuthProxy(target: string, headers: Record<string, string>): Promise<AuthProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, ...headers },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => {
      if (!res.headersSent) res.writeHead(502).end("proxy: upstream failed");
      else res.destroy();
    });
    res.on("close", () => forwarded.destroy());
    req.pipe(forwarded);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    get requests() {
      return requests;
    },
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      return closed;
    },
  };
}

/** The result of a bounded child process run. */
export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

/**
 * Runs `command args` with a hard timeout (SIGKILL on expiry, the whole process group); never
 * rejects on a non-zero exit — the caller asserts on the result.
 */
export function runBounded(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, durationMs: Date.now() - started });
    });
  });
}
