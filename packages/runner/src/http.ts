import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { AppError, bearerToken, errorFields, type Logger, secretsEqual } from "@mcpgw/core";
import { serveFace } from "./face";
import type { InstanceManager } from "./instances";

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface RunnerHttpOptions {
  instances: InstanceManager;
  logger: Logger;
  /** The shared secret every request but /healthz must carry as a bearer token. */
  token: string;
}

/**
 * The runner's HTTP face: `/servers/{id}/mcp` and `/servers/{id}/threads/{thread}/mcp` (streamable
 * HTTP MCP per child), thread lifecycle (`POST /threads/{t}/servers/{id}`, `DELETE /threads/{t}`),
 * `DELETE /servers/{id}` (stop a changed server's children), `GET /servers` (live instances) and
 * `GET /healthz`.
 *
 * A request whose connection closes before it is answered has been given up by its caller (a probe
 * past its deadline closes its request): a child start it was waiting for is abandoned with it.
 */
export function createRunnerServer(options: RunnerHttpOptions): Server {
  return createServer((req, res) => {
    handle(options, req, res).catch((error) => {
      const status = error instanceof AppError ? error.status : 500;
      if (!(error instanceof AppError)) options.logger.error("runner request failed", errorFields(error));
      if (res.destroyed) return; // the caller is gone: nobody to answer
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const detail = error instanceof AppError ? error.detail : "internal error";
      send(res, status, { code: error instanceof AppError ? error.code : "internal", detail });
    });
  });
}

async function handle(options: RunnerHttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort(new AppError("request.invalid", "the caller went away"));
  });
  const url = new URL(req.url ?? "/", "http://runner");
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (req.method === "GET" && url.pathname === "/healthz")
    return send(res, 200, { ok: true, children: options.instances.size });
  if (!authorized(req.headers.authorization, options.token)) {
    return send(res, 401, { code: "auth.unauthorized", detail: "missing or invalid runner token" });
  }
  const { instances } = options;
  if (req.method === "GET" && url.pathname === "/servers")
    return send(res, 200, { instances: await instances.list() });

  // /servers/{id}/mcp and /servers/{id}/threads/{thread}/mcp
  if (
    parts[0] === "servers" &&
    parts[1] &&
    (parts.length === 3 || parts.length === 5) &&
    parts.at(-1) === "mcp"
  ) {
    const threadId = parts.length === 5 && parts[2] === "threads" ? parts[3] : undefined;
    if (parts.length === 5 && !threadId)
      return send(res, 404, { code: "request.not_found", detail: "no such route" });
    // A face is stateless: nothing of the child's reaches a caller but answers to its own requests, so
    // there is no stream to hold open (405 tells MCP clients not to keep one per session).
    if (req.method === "GET") {
      res.setHeader("allow", "POST, DELETE");
      return send(res, 405, { code: "request.invalid", detail: "this MCP endpoint has no GET stream" });
    }
    const body = req.method === "POST" ? await readJson(req) : undefined;
    // A new MCP session (the worker's probe, a gateway's cold open) reads the config afresh: a probe of a
    // new config must reach a child of that config, not the old one still inside the config cache's TTL.
    return instances.use(
      parts[1],
      threadId,
      (instance) =>
        serveFace(instance.client, req, res, body, { alive: () => instances.checkAlive(instance) }),
      { fresh: isInitialize(body), signal: gone.signal },
    );
  }
  // POST /threads/{thread}/servers/{id}
  if (
    req.method === "POST" &&
    parts[0] === "threads" &&
    parts[1] &&
    parts[2] === "servers" &&
    parts[3] &&
    parts.length === 4
  ) {
    const instance = await instances.acquire(parts[3], parts[1], { fresh: true, signal: gone.signal });
    return send(res, 200, {
      serverId: instance.serverId,
      threadId: instance.threadId,
      pid: instance.transport.pid,
    });
  }
  // DELETE /servers/{id}?below=<generation>: the server was deleted, disabled or reconfigured
  if (req.method === "DELETE" && parts[0] === "servers" && parts[1] && parts.length === 2) {
    const below = url.searchParams.get("below");
    const generation = below === null ? undefined : Number(below);
    if (generation !== undefined && !Number.isInteger(generation))
      return send(res, 400, { code: "request.invalid", detail: "below must be an integer generation" });
    return send(res, 200, { stopped: await instances.stopServer(parts[1], generation) });
  }
  // DELETE /threads/{thread}
  if (req.method === "DELETE" && parts[0] === "threads" && parts[1] && parts.length === 2) {
    return send(res, 200, { stopped: await instances.stopThread(parts[1]) });
  }
  send(res, 404, { code: "request.not_found", detail: "no such route" });
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) =>
      typeof message === "object" &&
      message !== null &&
      (message as { method?: unknown }).method === "initialize",
  );
}

function authorized(header: string | undefined, token: string): boolean {
  const given = bearerToken(header);
  return given !== undefined && secretsEqual(given, token);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new AppError("request.too_large", "request body too large");
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new AppError("request.malformed_json", "the request body is not valid JSON");
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
