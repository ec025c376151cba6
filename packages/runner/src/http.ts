import type { Server } from "node:http";
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import {
  AppError,
  bearerToken,
  errorFields,
  type Logger,
  problemResponse,
  secretsEqual,
  whenSent,
} from "@mcpgw/core";
import { PROMETHEUS_CONTENT_TYPE, traceRequests } from "@mcpgw/telemetry";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { Faces } from "./face";
import { type InstanceManager, PROBE_CALLER } from "./instances";
import type { QuietClose } from "./quiet-close";

const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface RunnerHttpOptions {
  instances: InstanceManager;
  logger: Logger;
  /** The shared secret every request but /healthz must carry as a bearer token. */
  token: string;
  /** The children's MCP faces (and their 2025 sessions); made here when not given. */
  faces?: Faces;
  /** Prometheus text for `GET /metrics` (no token: given only when the face listens on loopback). */
  metricsText?: () => Promise<string>;
  /**
   * In a fleet: whether this runner's registration is current (its heartbeat reached the table). Not,
   * and `GET /healthz` answers 503: it holds no lease it can count on, and the task is replaced.
   */
  registered?: () => boolean;
  /** A fleet runner's quiet close: once it leaves, every response ends its connection. */
  quiet?: QuietClose;
}

type RunnerEnv = { Bindings: HttpBindings };

/**
 * The runner's HTTP face, a Hono app: `/servers/{id}/mcp` and `/servers/{id}/threads/{thread}/mcp`
 * (streamable HTTP MCP per child; each also under `…/callers/{caller}/mcp`, naming who calls — see
 * {@link callerOf}), thread lifecycle (`POST /threads/{t}/servers/{id}`,
 * `DELETE /threads/{t}`), `DELETE /servers/{id}` (stop a changed server's children), `GET /servers`
 * (live instances) and `GET /healthz`. Errors are problem+json from the same renderer as the API's;
 * a face answers MCP errors as JSON-RPC, in either protocol era (see {@link Faces}).
 *
 * A request whose connection closes before it is answered has been given up by its caller (a probe
 * past its deadline closes its request): a child start it was waiting for is abandoned with it.
 */
export function createRunnerApp(options: RunnerHttpOptions): Hono<RunnerEnv> {
  const { instances, logger } = options;
  const faces = options.faces ?? new Faces({ logger });
  const app = new Hono<RunnerEnv>();
  app.onError((error, c) => {
    if (error instanceof AppError) return problemResponse(error, c.req.path);
    logger.error("runner request failed", errorFields(error));
    return problemResponse(new AppError("internal", "internal error"), c.req.path);
  });
  app.notFound((c) => problemResponse(new AppError("request.not_found", "no such route"), c.req.path));
  if (options.quiet) app.use("*", options.quiet.endingConnections());

  app.get("/healthz", (c) => {
    const registered = options.registered?.() ?? true;
    return c.json({ ok: registered, children: instances.size }, registered ? 200 : 503);
  });
  const { metricsText } = options;
  if (metricsText)
    app.get("/metrics", async (c) =>
      c.text(await metricsText(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE }),
    );
  app.use("*", requireRunnerToken(options.token));
  // A server span per request, continuing the gateway's trace (only the token's holder can name one).
  app.use("*", traceRequests());
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        problemResponse(new AppError("request.too_large", "request body too large"), c.req.path),
    }),
  );

  app.get("/servers", async (c) => c.json({ instances: await instances.list() }));

  // A face keeps no standing stream: what reaches a caller rides its own requests' responses (405
  // tells MCP clients not to keep one per session; the 2026-07-28 era has none anyway).
  const noStream = (c: Context<RunnerEnv>) => {
    const error = new AppError("request.method_not_allowed", "this MCP endpoint has no GET stream");
    const response = problemResponse(error, c.req.path);
    response.headers.set("allow", "POST, DELETE");
    return response;
  };
  for (const path of FACE_PATHS) app.get(path, noStream);
  const face = async (c: Context<RunnerEnv>) => {
    const serverId = c.req.param("id") as string;
    const threadId = c.req.param("thread");
    const caller = callerOf(c.req.param("caller"));
    const key = `${threadId ? `${serverId}#${threadId}` : serverId}@${caller}`;
    const request = c.req.raw;
    if (c.req.method === "DELETE") return faces.end(key, request);
    const body = await readJson(request);
    // A new MCP session (the worker's probe, a gateway's cold open) reads the config afresh: a probe of a
    // new config must reach a child of that config, not the old one still inside the config cache's TTL.
    const connecting = opensSession(body);
    const generation = Number(c.req.query("generation"));
    const instance = await instances.acquire(serverId, threadId, {
      fresh: connecting,
      signal: request.signal,
      followed: c.req.query("placement") === "followed",
      caller,
      ...(Number.isSafeInteger(generation) ? { generation } : {}),
    });
    // In use from here until the response is sent (a retirement meanwhile waits for it): a streamed one
    // outlives this handler; the child's replies it carries count against the child's reply budget.
    const sent = afterResponse(instances.hold(instance));
    try {
      // The caller left while it waited: nothing to serve (a call must not reach the child for nobody).
      request.signal.throwIfAborted();
      // The face answers a (re)connect from what the child said at its start: a hung child must not look
      // alive to the caller asking (the gateway's liveness check after a call timed out), so ask it.
      if (connecting && !(await instances.checkAlive(instance)))
        throw new AppError("upstream.timeout", "the server's process does not answer");
      const response = await faces.serve({
        key,
        caller,
        child: instance,
        request,
        body,
        alive: () => instances.checkAlive(instance),
        onSent: sent.add,
      });
      return whenSent(response, sent.run, { everyBody: true });
    } catch (error) {
      sent.run();
      throw error;
    }
  };
  for (const path of FACE_PATHS) app.on(["POST", "DELETE"], path, face);

  app.post("/threads/:thread/servers/:id", async (c) => {
    const instance = await instances.acquire(c.req.param("id"), c.req.param("thread"), {
      fresh: true,
      signal: c.req.raw.signal,
      followed: c.req.query("placement") === "followed",
    });
    return c.json({ serverId: instance.serverId, threadId: instance.threadId, pid: instance.transport.pid });
  });

  // The server was deleted, disabled or reconfigured: `?below=<generation>` spares the current one;
  // `&drain=1` (a newer generation settled) lets the older ones' calls in flight end first.
  app.delete("/servers/:id", async (c) => {
    const below = c.req.query("below");
    const generation = below === undefined ? undefined : Number(below);
    if (generation !== undefined && !Number.isInteger(generation))
      throw new AppError("request.invalid", "below must be an integer generation");
    const drain = c.req.query("drain") === "1";
    return c.json({ stopped: await instances.stopServer(c.req.param("id"), generation, { drain }) });
  });

  app.delete("/threads/:thread", async (c) =>
    c.json({ stopped: await instances.stopThread(c.req.param("thread")) }),
  );
  return app;
}

/** The runner app on a node:http server (not yet listening). */
export function createRunnerServer(options: RunnerHttpOptions): Server {
  return createAdaptorServer({ fetch: createRunnerApp(options).fetch }) as Server;
}

/** Hooks run once, when a response has been sent: those added later run at once. */
function afterResponse(first: () => void) {
  const hooks = [first];
  let done = false;
  return {
    add: (hook: () => void) => (done ? hook() : void hooks.push(hook)),
    run: () => {
      done = true;
      for (const hook of hooks.splice(0)) hook();
    },
  };
}

/** The face of a child: a server's (or one thread's instance), as a caller or as the worker's probe. */
const FACE_PATHS = [
  "/servers/:id/mcp",
  "/servers/:id/callers/:caller/mcp",
  "/servers/:id/threads/:thread/mcp",
  "/servers/:id/threads/:thread/callers/:caller/mcp",
];

/** A caller principal as the gateway names it: `user:<sub>`, `key:<id>` or `admin` (no control characters). */
const CALLER = /^(?:user:\P{Cc}{1,1024}|key:\P{Cc}{1,256}|admin)$/u;

/**
 * The caller a face request names (the `{caller}` path segment, which only the holder of the runner
 * token — the gateway — can send), or {@link PROBE_CALLER} without one; a malformed one is a 400.
 */
function callerOf(segment: string | undefined): string {
  if (segment === undefined) return PROBE_CALLER;
  if (!CALLER.test(segment))
    throw new AppError("request.invalid", "caller must be user:<sub>, key:<id> or admin");
  return segment;
}

/** Every route but /healthz takes only the runner token (bearer; compared in constant time). */
function requireRunnerToken(token: string) {
  return createMiddleware<RunnerEnv>(async function requireRunnerToken(c, next) {
    const given = bearerToken(c.req.header("authorization"));
    if (given === undefined || !secretsEqual(given, token))
      throw new AppError("auth.unauthorized", "missing or invalid runner token");
    await next();
  });
}

/** A 2025 `initialize` or a 2026-07-28 `server/discover`: a caller (re)connecting to the server. */
function opensSession(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const method =
      typeof message === "object" && message !== null ? (message as { method?: unknown }).method : undefined;
    return method === "initialize" || method === "server/discover";
  });
}

async function readJson(request: Request): Promise<unknown> {
  try {
    return JSON.parse(await request.text());
  } catch {
    throw new AppError("request.malformed_json", "the request body is not valid JSON");
  }
}
