import { randomBytes, randomUUID } from "node:crypto";
import {
  type ActiveSpan,
  beginSpan,
  errorFields,
  errorTypeOf,
  inSpan,
  type Logger,
  SpanKind,
  whenSent,
  withTraceMeta,
} from "@mcpgw/core";
import { jsonSchemaValidator, MAX_CALL_MS } from "@mcpgw/upstream";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  type AuthInfo,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  createMcpHandler,
  createRequestStateCodec,
  type Implementation,
  type InputRequest,
  inputRequired,
  isLegacyRequest,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  type RequestStateCodec,
  Server,
  type ServerContext,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Attachment, ChildBridge, InputAsk } from "./bridge";

/** The child a face fronts: the runner's session with it, and what stands between them. */
export interface FaceChild {
  client: Client;
  bridge: ChildBridge;
}

/** One HTTP request to a face. */
export interface FaceRequest {
  /** Which face it is (server, thread, caller): a 2025 session belongs to one. */
  key: string;
  /**
   * Who calls, as the gateway names them (`user:<sub>`, `key:<id>`, `admin`; `probe` for the worker's
   * probes): a child's request for input goes only to this caller's calls.
   */
  caller: string;
  child: FaceChild;
  /** The HTTP request (its body already read); its signal aborts when the caller is gone. */
  request: Request;
  /** Its JSON body. */
  body: unknown;
  /**
   * Whether the child answers the runner's ping (a hung one is killed by this check). Asked when a
   * forwarded request ends unanswered — its caller went away, or it timed out — and for a 2025
   * caller's own `ping`, which so reaches the child instead of being answered by the face alone.
   */
  alive?: () => Promise<boolean>;
  /**
   * Runs `hook` once this request's answer has been sent (or given up): the child's replies it carries
   * are held against the child's reply budget until then. Without it they are released once handed over.
   */
  onSent?: (hook: () => void) => void;
}

export interface FacesOptions {
  logger: Logger;
  /** A 2025 session with no request for this long is ended (default 30 min). */
  sessionIdleMs?: number;
  /** The most 2025 sessions kept; past it the least recently used is ended (default 1,000). */
  maxSessions?: number;
}

/** How many rounds of input one call may ask its 2025 caller for (the SDK's shim re-entries). */
const MAX_INPUT_ROUNDS = 64;
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_SESSIONS = 1_000;
/** What a face's `requestState` carries: the call parked in this process, and the round it is at. */
interface CallState {
  call: string;
  round: number;
}
/** Where a request's face rides in the `authInfo` handed through the SDK to the handlers. */
const FACE = "mcpgw.face";

interface LegacySession {
  id: string;
  key: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastUsed: number;
}

/**
 * The streamable-HTTP MCP faces of the runner's children, serving both protocol eras on one URL.
 *
 * A 2026-07-28 request (its `_meta` envelope) is served statelessly by a per-request SDK `Server`:
 * `server/discover` answers with the child's capabilities, instructions and serverInfo, and every
 * method the child offers is forwarded to the runner's session with it. A 2025 request is served
 * statelessly too — unless its `initialize` declares elicitation, sampling or roots: then the face
 * keeps a session in memory (the runner is one long-lived process), so the child's requests for
 * input can reach that caller on its requests' streams. GET is 405 in both eras (no standing stream).
 *
 * A child's request for input during a call (see {@link ChildBridge} for which call it goes to)
 * comes back to a 2026-07-28 caller as an `input_required` result whose `requestState` names the
 * call (HMAC-signed, bound to the method and face); the call stays open at the child, and the
 * caller's retry with `inputResponses` answers it. A 2025 session caller is asked by the SDK's
 * legacy shim, on the stream of the request that caused it; a caller without the capability never
 * is — the child gets a JSON-RPC error.
 */
export class Faces {
  private readonly sessions = new Map<string, LegacySession>();
  private readonly modern: McpHttpHandler;
  private readonly codec: RequestStateCodec;
  private readonly sweeper: NodeJS.Timeout;
  private readonly sessionIdleMs: number;
  private readonly maxSessions: number;

  constructor(private readonly options: FacesOptions) {
    this.sessionIdleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    // The calls a state names live in this process only: a key of its own, never shared.
    this.codec = createRequestStateCodec({
      key: randomBytes(32),
      ttlSeconds: 3_600,
      bind: (ctx) => `${ctx.mcpReq.method}\0${faceOf(ctx).key}`,
    });
    this.modern = createMcpHandler(({ authInfo }) => this.server(faceFromAuth(authInfo), "modern"), {
      legacy: "reject",
      responseMode: "auto",
      // No listen streams: a face has no list_changed to push (the runner probes on a child's).
      maxSubscriptions: 0,
      onerror: (error) => this.options.logger.debug("face request refused", errorFields(error)),
    });
    this.sweeper = setInterval(() => this.endIdleSessions(), Math.min(60_000, this.sessionIdleMs));
    this.sweeper.unref();
  }

  /** Serves one POST to a face. */
  async serve(face: FaceRequest): Promise<Response> {
    const { request, body } = face;
    const authInfo = authFor(face);
    if (!(await isLegacyRequest(request, body)))
      return this.modern.fetch(request, { authInfo, parsedBody: body });
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId !== null) {
      const session = this.sessions.get(sessionId);
      if (!session || session.key !== face.key) return sessionNotFound();
      session.lastUsed = Date.now();
      return session.transport.handleRequest(request, { authInfo, parsedBody: body });
    }
    if (wantsSession(body)) return this.openSession(face, authInfo);
    return this.serveStateless(face, authInfo);
  }

  /**
   * A DELETE to a face: ends that 2025 session (`Mcp-Session-Id`); 404 for a session it does not
   * have, 405 without one (a stateless face has nothing to end).
   */
  async end(key: string, request: Request): Promise<Response> {
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) return methodNotAllowed();
    const session = this.sessions.get(sessionId);
    if (!session || session.key !== key) return sessionNotFound();
    return session.transport.handleRequest(request);
  }

  /** Number of 2025 sessions kept. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Ends every session (runner stop). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((session) => session.server.close().catch(() => undefined)));
    await this.modern.close();
  }

  private async serveStateless(face: FaceRequest, authInfo: AuthInfo): Promise<Response> {
    const server = this.server(face.child, "legacy");
    // JSON unless a request asked for progress, which needs the request's own event stream.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !asksForProgress(face.body),
    });
    await server.connect(transport);
    const teardown = () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    };
    face.request.signal.addEventListener("abort", teardown, { once: true });
    const response = await transport.handleRequest(face.request, { authInfo, parsedBody: face.body });
    return whenSent(response, () => {
      face.request.signal.removeEventListener("abort", teardown);
      teardown();
    });
  }

  private async openSession(face: FaceRequest, authInfo: AuthInfo): Promise<Response> {
    const server = this.server(face.child, "legacy");
    let opened: LegacySession | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        opened = { id, key: face.key, server, transport, lastUsed: Date.now() };
        this.sessions.set(id, opened);
        this.trimSessions();
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    server.onclose = () => {
      if (opened && this.sessions.get(opened.id) === opened) this.sessions.delete(opened.id);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(face.request, { authInfo, parsedBody: face.body });
    if (!opened) void server.close().catch(() => undefined);
    return response;
  }

  private trimSessions(): void {
    if (this.sessions.size <= this.maxSessions) return;
    const oldest = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    for (const session of oldest.slice(0, this.sessions.size - this.maxSessions)) this.endSession(session);
  }

  private endIdleSessions(): void {
    const cutoff = Date.now() - this.sessionIdleMs;
    for (const session of this.sessions.values()) if (session.lastUsed < cutoff) this.endSession(session);
  }

  private endSession(session: LegacySession): void {
    this.sessions.delete(session.id);
    void session.server.close().catch(() => undefined);
  }

  /** A face's SDK server for one request (or one 2025 session): the child's surface, forwarded. */
  private server(child: FaceChild, era: "modern" | "legacy"): Server {
    const offered = child.client.getServerCapabilities() ?? {};
    const instructions = child.client.getInstructions();
    const server = new Server(
      (child.client.getServerVersion() as Implementation | undefined) ?? FALLBACK_INFO,
      {
        capabilities: {
          tools: {},
          ...(offered.resources ? { resources: {} } : {}),
          ...(offered.prompts ? { prompts: {} } : {}),
          ...(offered.completions ? { completions: {} } : {}),
          ...(offered.logging ? { logging: {} } : {}),
        },
        ...(instructions ? { instructions } : {}),
        requestState: { verify: (state, ctx) => this.codec.verify(state, ctx) },
        inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
        jsonSchemaValidator,
      },
    );
    server.onerror = (error) => this.options.logger.debug("face error", errorFields(error));
    const forward = (method: string) => (request: { params?: object }, ctx: ServerContext) =>
      this.forward(ctx, method, request.params) as never;
    const interactive = (method: string) => (request: { params?: object }, ctx: ServerContext) =>
      this.interactive(server, era, ctx, method, request.params) as never;
    server.setRequestHandler("ping", (_request, ctx) => this.ping(ctx));
    server.setRequestHandler("tools/list", forward("tools/list"));
    server.setRequestHandler("tools/call", interactive("tools/call"));
    if (offered.resources) {
      server.setRequestHandler("resources/list", forward("resources/list"));
      server.setRequestHandler("resources/templates/list", forward("resources/templates/list"));
      server.setRequestHandler("resources/read", interactive("resources/read"));
    }
    if (offered.prompts) {
      server.setRequestHandler("prompts/list", forward("prompts/list"));
      server.setRequestHandler("prompts/get", interactive("prompts/get"));
    }
    if (offered.completions) server.setRequestHandler("completion/complete", forward("completion/complete"));
    return server;
  }

  /** A 2025 caller's `ping` is answered by the child (a hung child fails it, and is killed). */
  private async ping(ctx: ServerContext): Promise<Record<string, never>> {
    const face = faceOf(ctx);
    if (face.alive && !(await face.alive()))
      throw new ProtocolError(ProtocolErrorCode.InternalError, "the server does not answer");
    return {};
  }

  /** Forwards a request that cannot need input (lists, completion); the answer comes back whole. */
  private async forward(ctx: ServerContext, method: string, params: object | undefined) {
    const face = faceOf(ctx);
    const signal = AbortSignal.any([ctx.mcpReq.signal, face.request.signal]);
    const relayed = new Relayed(ctx);
    const owner = randomUUID();
    afterSent(face, () => face.child.bridge.releaseReplies(owner));
    try {
      const result = await inSpan(method, childSpan(method, params), () =>
        face.child.bridge.forward(method, toChild(params), {
          caller: face.caller,
          signal,
          timeoutMs: MAX_CALL_MS,
          log: relayed.log,
          owner,
        }),
      );
      await relayed.sent();
      return result;
    } catch (error) {
      if (signal.aborted || isTimeout(error)) void face.alive?.();
      await relayed.sent();
      throw toProtocolError(error);
    }
  }

  /**
   * Forwards a request that may need input (`tools/call`, `prompts/get`, `resources/read`), or
   * resumes the call its `requestState` names with the caller's `inputResponses`; answers with the
   * child's result, or — when the child asks for input — `input_required` (a 2025 caller's is
   * fulfilled by the SDK's shim, which re-enters here with the answers).
   */
  private async interactive(
    server: Server,
    era: "modern" | "legacy",
    ctx: ServerContext,
    method: string,
    params: object | undefined,
  ) {
    const face = faceOf(ctx);
    const { bridge } = face.child;
    const capabilities =
      era === "modern"
        ? ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
            | ClientCapabilities
            | undefined)
        : server.getClientCapabilities();
    const progressToken = (params as { _meta?: { progressToken?: string | number } } | undefined)?._meta
      ?.progressToken;
    const state = ctx.mcpReq.requestState<CallState>();
    let call: Awaited<ReturnType<ChildBridge["start"]>>;
    // The child's request, from its start to the child's first answer (its result, error or question).
    let sent: ActiveSpan | undefined;
    const failed = (error: unknown) => {
      sent?.end(undefined, errorTypeOf(error));
      throw error;
    };
    if (state !== undefined) {
      const found = typeof state === "object" ? bridge.find(state.call) : undefined;
      if (
        !found ||
        found.caller !== face.caller ||
        found.method !== method ||
        found.round !== state.round ||
        !sameTarget(found.params, params)
      )
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid or expired requestState", {
          reason: "invalid_request_state",
        });
      call = found;
      call.capabilities = capabilities;
      call.answer(ctx.mcpReq.inputResponses ?? {});
    } else {
      const span = beginSpan(method, childSpan(method, params));
      sent = span;
      call = await span
        .run(() =>
          bridge.start(method, toChild(params), {
            caller: face.caller,
            signal: AbortSignal.any([ctx.mcpReq.signal, face.request.signal]),
            capabilities,
            timeoutMs: MAX_CALL_MS,
            progress: progressToken !== undefined,
            alive: face.alive && (() => void face.alive?.()),
          }),
        )
        .catch(failed);
    }
    const signal = AbortSignal.any([ctx.mcpReq.signal, face.request.signal]);
    const relayed = new Relayed(ctx);
    const attachment: Attachment = {
      signal,
      log: relayed.log,
      ...(progressToken === undefined ? {} : { progress: relayed.progress(progressToken) }),
    };
    const event = await call.next(attachment).catch(failed);
    sent?.end(undefined, event.kind === "error" ? errorTypeOf(event.error) : undefined);
    await relayed.sent();
    if (event.kind !== "input") afterSent(face, () => bridge.releaseReplies(call.id));
    switch (event.kind) {
      case "result":
        call.finish();
        return event.result;
      case "error":
        call.finish();
        if (signal.aborted || isTimeout(event.error)) void face.alive?.();
        throw toProtocolError(event.error);
      case "input":
        // A 2025 caller's request stays open while the shim asks it; a 2026 one's ends here.
        call.park(era === "legacy" ? attachment : undefined);
        return inputRequired({
          inputRequests: Object.fromEntries(event.asks.map((ask) => [ask.key, embedded(ask)])),
          requestState: await this.codec.mint({ call: call.id, round: call.round } satisfies CallState, ctx),
        });
    }
  }
}

const FALLBACK_INFO: Implementation = { name: "stdio-server", version: "0" };

/** The `authInfo` a face's request rides through the SDK (the runner token is the only principal). */
function authFor(face: FaceRequest): AuthInfo {
  return { token: "runner", clientId: "mcp-gateway", scopes: [], extra: { [FACE]: face } };
}

function faceFromAuth(authInfo: AuthInfo | undefined): FaceChild {
  const face = authInfo?.extra?.[FACE] as FaceRequest | undefined;
  if (!face) throw new Error("a face request without its face");
  return face.child;
}

function faceOf(ctx: ServerContext): FaceRequest {
  const face = ctx.http?.authInfo?.extra?.[FACE] as FaceRequest | undefined;
  if (!face) throw new ProtocolError(ProtocolErrorCode.InternalError, "a face request without its face");
  return face;
}

/** A child's request for input, as the caller's `inputRequests` carry it. */
function embedded(ask: InputAsk): InputRequest {
  switch (ask.method) {
    case "elicitation/create":
      return {
        method: ask.method,
        params: { ...ask.params, mode: ask.params?.mode ?? "form" },
      } as InputRequest;
    case "sampling/createMessage":
      return { method: ask.method, params: ask.params } as InputRequest;
    case "roots/list":
      return { method: ask.method } as InputRequest;
  }
}

/** The retry names the same tool, prompt or resource as the call its state names. */
function sameTarget(started: Record<string, unknown> | undefined, params: object | undefined): boolean {
  const now = params as Record<string, unknown> | undefined;
  return started?.name === now?.name && started?.uri === now?.uri;
}

/**
 * A request's params as the child gets them: the caller's progress token stays with the face, and the
 * trace context is the runner's span for the child's request (the gateway's replaced).
 */
function toChild(params: object | undefined): Record<string, unknown> | undefined {
  if (!params) return withTraceMeta(undefined);
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  if (!_meta) return withTraceMeta(rest);
  const { progressToken: _token, ...meta } = _meta;
  return withTraceMeta(Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest);
}

/** The client span of a request the runner sends its child: the method and a tool's name, no value. */
function childSpan(method: string, params: object | undefined) {
  const tool = method === "tools/call" ? (params as { name?: unknown } | undefined)?.name : undefined;
  return {
    kind: SpanKind.CLIENT,
    attributes: {
      "mcp.method.name": method,
      "network.transport": "stdio",
      ...(typeof tool === "string" ? { "gen_ai.tool.name": tool } : {}),
    },
  };
}

/**
 * What one request relays to its caller before its answer — the child's progress and log messages —
 * sent in the order the child sent them, and all of it before the answer.
 */
class Relayed {
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: ServerContext) {}

  /** Relays progress under the caller's own token. */
  progress(progressToken: string | number): NonNullable<Attachment["progress"]> {
    return (progress) =>
      this.enqueue(() =>
        this.ctx.mcpReq.notify({ method: "notifications/progress", params: { ...progress, progressToken } }),
      );
  }

  /** Relays a log message, filtered by the SDK (by the level the caller's era lets it ask for). */
  readonly log: NonNullable<Attachment["log"]> = (params) =>
    // biome-ignore lint/suspicious/noExplicitAny: the child's level is a 2025 LoggingLevel, the same set
    this.enqueue(() => this.ctx.mcpReq.log(params.level as any, params.data, params.logger));

  /** Settles once everything relayed so far has been sent (or failed to be). */
  sent(): Promise<void> {
    return this.last;
  }

  private enqueue(send: () => Promise<void>): void {
    this.last = this.last.then(send).catch(() => undefined);
  }
}

/** Whether any message of the body asks for progress (`_meta.progressToken`). */
function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (message) =>
      (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta
        ?.progressToken !== undefined,
  );
}

/** A 2025 `initialize` whose client can be asked for input: it gets a session kept in memory. */
function wantsSession(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { capabilities?: object } };
    if (method !== "initialize") return false;
    const capabilities = (params?.capabilities ?? {}) as ClientCapabilities;
    return Boolean(capabilities.elicitation || capabilities.sampling || capabilities.roots);
  });
}

/** The child did not answer in time (the runner's own session timed the request out). */
function isTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}

/** Runs `hook` once `face`'s answer has been sent (at once when nobody tells). */
function afterSent(face: FaceRequest, hook: () => void): void {
  if (face.onSent) face.onSent(hook);
  else hook();
}

/** A child's error as the face answers it: its JSON-RPC code and message (without v1's prefix). */
function toProtocolError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof McpError)
    return new ProtocolError(error.code, error.message.replace(/^(MCP error -?\d+: )+/, ""), error.data);
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    error instanceof Error ? error.message : String(error),
  );
}

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}) {
  return Response.json(
    { jsonrpc: "2.0", error: { code, message }, id: null },
    { status, headers: { "content-type": "application/json", ...headers } },
  );
}

/** 404 for a session the face does not have (ended, or the runner restarted): the client starts anew. */
function sessionNotFound(): Response {
  return jsonRpcError(404, -32001, "Session not found");
}

function methodNotAllowed(): Response {
  return jsonRpcError(405, -32000, "Method not allowed: this face keeps no session to end.", {
    allow: "POST",
  });
}
