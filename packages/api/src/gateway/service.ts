import { ADMIN_OWNER, recordFailure, SealError, type Store } from "@mcpgw/aws";
import {
  AppError,
  type CredentialOutcome,
  errorFields,
  type FailureReason,
  isPerUser,
  type Logger,
  type PlainServer,
  parseQualifiedName,
  SHARED_SUBJECT,
  type ToolInfo,
  UNREADABLE_SECRETS,
} from "@mcpgw/core";
import {
  type CallContext,
  CallFailure,
  type CallOptions,
  callTool,
  classifyFailure,
  credentialSecrets,
  describeFailure,
  type ForwardOptions,
  forwardRequest,
  type InputRequired,
  type InputRound,
  NO_RUNNER_ERROR,
  type OpenOptions,
  openSession,
  type PooledSession,
  type RunnerEndpoint,
  refreshHeldCredential,
  refusalStatus,
  type SessionPool,
  scrubSecrets,
  type ToolCallResult,
  targetOf,
  transportHttpStatus,
  type UpstreamSession,
  type UpstreamTarget,
} from "@mcpgw/upstream";
import { ProtocolError } from "@modelcontextprotocol/server";
import type { Principal } from "../env";
import {
  type AuthorizationLink,
  beginUpstreamAuthorization,
  credentialSubject,
} from "../upstream-authorization";
import type { CallLatency } from "./call-latency";
import { type Directory, type DirectoryEntry, isAvailable } from "./directory";

/** What the data plane needs. */
export interface GatewayDeps {
  store: Store;
  logger: Logger;
  directory: Directory;
  pool: SessionPool;
  /** The outbound-guarded fetch upstream sessions use. */
  fetch: typeof fetch;
  runner?: RunnerEndpoint | undefined;
  /** How often an in-flight call logs a heartbeat. */
  heartbeatMs?: number;
  /** The largest message an upstream may send (MAX_UPSTREAM_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Where an upstream's own change notifications go (its catalogue refreshed, subscribers told). */
  changes?: UpstreamChanges;
  /** Each tool call's duration, summed up per server for its latency history (written off the path). */
  callLatency?: CallLatency;
  /** The admin function's public URL (PUBLIC_ADMIN_URL): where a per-user authorization comes back. */
  publicAdminUrl?: string | undefined;
}

/**
 * A `per_user` server's caller has no connection of their own yet (or the upstream refused their
 * token): the link where they authorize it. The REST API answers it as a tool result, the MCP
 * endpoints as a URL-mode elicitation where the client takes one.
 */
export class AuthorizationNeeded extends Error {
  override readonly name = "AuthorizationNeeded";
  constructor(
    readonly server: string,
    readonly link: AuthorizationLink,
  ) {
    super(
      `Server '${server}' needs you to authorize the gateway with your own account first: open ${link.authorizationUrl} (good until ${link.expiresAt}), then call again.`,
    );
  }
}

/** What a caller who must authorize first gets as a tool result (isError, with the link). */
export function authorizationNeededResult(needed: AuthorizationNeeded): ToolCallResult {
  return {
    content: [{ type: "text", text: needed.message }],
    structuredContent: {
      authorizationRequired: true,
      authorizationUrl: needed.link.authorizationUrl,
      expiresAt: needed.link.expiresAt,
    },
    isError: true,
  };
}

/** Raised inside a session's open: the caller holds no usable credential of their own. */
class NoOwnCredential extends Error {}

/** What the data plane does when a warm upstream session says something changed. */
export interface UpstreamChanges {
  /** The session callbacks for one server's warm session. */
  watch(entry: DirectoryEntry): Pick<OpenOptions, "onListChanged" | "onResourceUpdated">;
}

/** A tool in the aggregated catalogue. */
export interface CatalogTool {
  name: string;
  server: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** The upstream's own name for the tool (what `/mcp/{server}` shows). */
  upstreamName: string;
  title?: string;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  /** The upstream's definition, whole (`_meta`, `icons` and all): what the MCP endpoints list. */
  definition: ToolInfo;
}

/** Which servers a caller may use: every one (`null`) or these ids (a rename keeps them). */
export type ServerScope = ReadonlySet<string> | null;

const LIVENESS_PING_MS = 2_000;

/** The outcomes of a tool call that got a result from its server. */
const ANSWERED = new Set(["ok", "tool_error", "input_required"]);

/** The header values each pooled session was opened with, so warm-path failures are scrubbed too. */
const sessionSecrets = new WeakMap<object, string[]>();

/**
 * Every tool of every enabled, connected server the caller may use, sorted by qualified name;
 * servers the chat switched off are left out. Best effort: one broken server never hides the rest.
 */
export async function listTools(
  deps: Pick<GatewayDeps, "directory" | "store">,
  options: { chat?: string; scope?: ServerScope; thread?: string } = {},
): Promise<CatalogTool[]> {
  const [snapshot, hidden, threadServers] = await Promise.all([
    deps.directory.snapshot(),
    hiddenServers(deps, options.chat),
    options.thread ? threadServerIds(deps, options.thread) : new Set<string>(),
  ]);
  const tools: CatalogTool[] = [];
  for (const entry of snapshot.byName.values()) {
    if (!isAvailable(entry) || hidden.has(entry.server.id) || !inScope(options.scope, entry.server.id))
      continue;
    // A thread-scoped server's tools belong to the threads that started an instance of it.
    if (isThreadScoped(entry) && !threadServers.has(entry.server.id)) continue;
    for (const [name, tool] of entry.tools) tools.push(catalogTool(name, entry.server.name, tool));
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A catalogue tool as the REST routes show it: `{name, server, description?, inputSchema}`. */
export function restTool({ name, server, description, inputSchema }: CatalogTool) {
  return { name, server, ...(description ? { description } : {}), inputSchema };
}

function catalogTool(name: string, server: string, tool: ToolInfo): CatalogTool {
  return {
    name,
    server,
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    upstreamName: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    definition: tool,
  };
}

/** Resolves `<server>__<tool>` to a server that may take the call, and the upstream's own tool name. */
export async function resolveTool(
  deps: GatewayDeps,
  qualified: string,
  options: { chat?: string; scope?: ServerScope } = {},
): Promise<{ entry: DirectoryEntry; tool: ToolInfo }> {
  const { server } = parseQualifiedName(qualified);
  const [cached, hidden] = await Promise.all([deps.directory.snapshot(), hiddenServers(deps, options.chat)]);
  // A server created, enabled or connected a moment ago may be newer than the cached view: look again.
  const known = cached.byName.get(server);
  const snapshot =
    known && isAvailable(known) && known.tools.has(qualified) ? cached : await deps.directory.fresh();
  const entry = snapshot.byName.get(server);
  if (!entry || !inScope(options.scope, entry.server.id))
    throw new AppError("server.not_found", `No server named '${server}'.`);
  if (hidden.has(entry.server.id)) {
    throw new AppError(
      "server.unavailable",
      `Server '${server}' is switched off for chat '${options.chat}'.`,
    );
  }
  if (!isAvailable(entry)) {
    const state = entry.server.enabled ? (entry.status?.state ?? "connecting") : "disabled";
    throw new AppError("server.unavailable", `Server '${server}' is ${state}.`, { state });
  }
  const tool = entry.tools.get(qualified);
  if (!tool) throw new AppError("tool.not_found", `Server '${server}' has no tool '${qualified}'.`);
  return { entry, tool };
}

/** True for a stdio server that runs one instance per thread. */
export function isThreadScoped(entry: DirectoryEntry): boolean {
  return (entry.server as { scope?: string }).scope === "thread";
}

/** The owner a principal's threads are recorded under: `admin`, the key's id, or `user:<sub>`. */
export function threadOwner(principal: Principal): string {
  if (principal.kind === "key") return principal.keyId;
  return principal.kind === "user" ? `user:${principal.sub}` : ADMIN_OWNER;
}

/** True when the principal may use a thread of `owner`: the admin every thread, a key or user its own (none without a principal). */
export function mayUseThread(principal: Principal | undefined, owner: string): boolean {
  return principal?.kind === "admin" || (principal !== undefined && threadOwner(principal) === owner);
}

/**
 * The thread a call to a thread-scoped server runs in: the caller's own (any, for the admin), with an
 * instance of the server. Another key's thread reads as one without that instance: 404 either way.
 */
async function threadOf(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  thread: string | undefined,
  principal: Principal | undefined,
): Promise<string> {
  if (!thread) {
    throw new AppError(
      "request.invalid",
      `Server '${entry.server.name}' is thread-scoped: pass the \`thread\` to call it in.`,
    );
  }
  const found = await deps.store.threads.thread(thread);
  if (
    !found ||
    !mayUseThread(principal, found.owner) ||
    !found.instances.some((instance) => instance.serverId === entry.server.id)
  ) {
    throw new AppError(
      "request.not_found",
      `Thread '${thread}' has no instance of '${entry.server.name}'; start one with POST /v1/threads/${thread}/servers/${entry.server.name}.`,
    );
  }
  return thread;
}

async function threadServerIds(deps: Pick<GatewayDeps, "store">, thread: string): Promise<Set<string>> {
  return new Set((await deps.store.threads.list(thread)).map((instance) => instance.serverId));
}

/** How a call reaches back to its caller, and who the caller is. */
export interface CallerOptions {
  chat?: string;
  scope?: ServerScope;
  signal?: AbortSignal;
  thread?: string;
  /** Who calls: decides whose threads `thread` may name. */
  principal?: Principal;
  /** The caller's channels for what the upstream sends mid-call (progress, logs, questions). */
  context?: CallContext;
  /** The answers of an earlier round, when the upstream needed input (2026-07-28). */
  round?: InputRound;
}

/**
 * Calls a tool through the warm session of its server. Tool-level failures are results
 * (`isError: true`); an upstream's need for input comes back as {@link InputRequired}; a transport
 * failure marks the server failed (under the generation fence), schedules the retry and becomes
 * `upstream.unreachable` (502) / `upstream.timeout` (504).
 */
export async function callGatewayTool(
  deps: GatewayDeps,
  qualified: string,
  args: Record<string, unknown>,
  options: CallerOptions = {},
): Promise<ToolCallResult | InputRequired> {
  const { entry, tool } = await resolveTool(deps, qualified, options);
  const thread = isThreadScoped(entry)
    ? await threadOf(deps, entry, options.thread, options.principal)
    : undefined;
  const { server } = entry;
  const subject = isPerUser(server) ? credentialSubject(options.principal) : undefined;
  const logger = deps.logger.child({ server: server.name, tool: tool.name });
  const started = performance.now();
  logger.info("tool call started", { argumentKeys: Object.keys(args) });
  const heartbeat = setInterval(
    () => logger.info("tool call in flight", { elapsedMs: Math.round(performance.now() - started) }),
    deps.heartbeatMs ?? 10_000,
  );
  let outcome = "error";
  const call = () =>
    withServerSession(
      deps,
      entry,
      (session, callOptions) =>
        callTool(session, tool.name, args, { ...callOptions, ...forwarded(options), tool }),
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(thread ? { thread } : {}),
        ...(subject ? { subject } : {}),
      },
    );
  try {
    const result = await call().catch((error) => {
      // An upstream that restarted forgot our session: reopen once and retry.
      if (error instanceof CallFailure && error.kind === "session_expired") return call();
      throw error;
    });
    outcome = "resultType" in result ? "input_required" : result.isError ? "tool_error" : "ok";
    return result;
  } catch (error) {
    if (error instanceof AuthorizationNeeded) outcome = "authorization_required";
    else outcome = error instanceof CallFailure ? error.kind : "error";
    throw error instanceof CallFailure ? toAppError(error, server.name) : error;
  } finally {
    clearInterval(heartbeat);
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    // A call that got a result (a tool error or a request for input too) did not fail.
    deps.callLatency?.record(server.id, durationMs, ANSWERED.has(outcome));
    logger.info("tool call finished", { outcome, durationMs });
  }
}

/**
 * Forwards a request other than a tool call (resources, prompts, completions, logging level,
 * subscriptions) to a server's warm session; failures become the gateway's problems, as for calls.
 */
export async function forwardToServer(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  method: string,
  params: Record<string, unknown> | undefined,
  options: Pick<CallerOptions, "signal" | "context" | "round" | "principal"> & {
    /** False for a fan-out (an aggregated list): a caller with no connection of their own is skipped, not asked. */
    authorize?: boolean;
  } = {},
): Promise<Record<string, unknown>> {
  try {
    return await withServerSession(
      deps,
      entry,
      (session, callOptions) =>
        forwardRequest(session, method, params, { ...callOptions, ...forwarded(options) }),
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(isPerUser(entry.server) ? { subject: credentialSubject(options.principal) } : {}),
        ...(options.authorize === false ? { authorize: false } : {}),
      },
    );
  } catch (error) {
    if (error instanceof AuthorizationNeeded)
      throw new AppError("upstream.authorization_required", error.message, {
        authorizationUrl: error.link.authorizationUrl,
      });
    throw error instanceof CallFailure ? toAppError(error, entry.server.name) : error;
  }
}

function forwarded(
  options: Pick<CallerOptions, "context" | "round">,
): Pick<ForwardOptions, "context" | "round"> {
  return {
    ...(options.context ? { context: options.context } : {}),
    ...(options.round ? { round: options.round } : {}),
  };
}

/**
 * Runs `op` on the server's warm upstream session (opening it when cold: one config read with KMS,
 * one initialize, shared by concurrent callers). Only transport loss — the connection gone, or the
 * server no longer answering a liveness ping — evicts the session, marks the server failed once
 * (under the fence) and schedules its retry; any other failure (a JSON-RPC error, an HTTP refusal or
 * a timeout of this one call while the server still answers) goes back to this caller only. Error
 * text is scrubbed of credentials.
 */
export async function withServerSession<T>(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  op: (session: UpstreamSession, options: CallOptions) => Promise<T>,
  {
    signal,
    thread,
    subject,
    authorize = true,
  }: {
    signal?: AbortSignal;
    thread?: string;
    /** A `per_user` server's caller (`user:<sub>`, `key:<id>`, `admin`): whose credential and session. */
    subject?: string;
    /** Whether a caller with no connection of their own is given an authorization to open (else refused). */
    authorize?: boolean;
  } = {},
): Promise<T> {
  const { server } = entry;
  try {
    return await sessionOf(deps, entry, op, { signal, thread, subject });
  } catch (error) {
    if (!(error instanceof NoOwnCredential) || !subject || server.transport !== "http") throw error;
    if (!authorize)
      throw new AppError(
        "upstream.authorization_required",
        `Server '${server.name}' needs you to authorize the gateway with your own account: call one of its tools to get the link.`,
      );
    throw new AuthorizationNeeded(server.name, await beginUpstreamAuthorization(deps, server, subject));
  }
}

async function sessionOf<T>(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  op: (session: UpstreamSession, options: CallOptions) => Promise<T>,
  { signal, thread, subject }: { signal?: AbortSignal; thread?: string; subject?: string },
): Promise<T> {
  const { server } = entry;
  const timeoutMs = server.timeoutSeconds * 1_000;
  const secrets: string[] = [];
  // A thread instance's failures are its own: the server's status describes the server, not one thread.
  const markFailed: typeof markServerFailed = thread ? async () => {} : markServerFailed;

  // Only a cold call gets here: one config read (with KMS), one initialize. Concurrent cold calls share it.
  async function open() {
    // Only an HTTP server's headers need opening (KMS); a stdio server is reached by id via the runner.
    const record =
      server.transport === "http"
        ? await deps.store.servers.get(server.id).catch(async (error: unknown) => {
            if (!(error instanceof SealError)) throw error;
            await markFailed(deps, entry, "failed", UNREADABLE_SECRETS);
            throw new CallFailure("unreachable", UNREADABLE_SECRETS, { cause: error });
          })
        : { transport: "stdio" as const, id: server.id };
    if (!record) throw new AppError("server.not_found", `No server named '${server.name}'.`);
    const plainTarget = targetOf(record, deps.runner, thread);
    const target =
      plainTarget && record.transport === "http" && record.auth
        ? await withUpstreamCredential(
            deps,
            entry,
            plainTarget,
            markFailed,
            (values) => secrets.push(...values),
            subject,
          )
        : plainTarget;
    if (!target) {
      await markFailed(deps, entry, "failed", NO_RUNNER_ERROR);
      throw new CallFailure("unreachable", NO_RUNNER_ERROR);
    }
    secrets.push(...Object.values(target.headers));
    try {
      // Not bound to this caller's signal: concurrent cold calls share this open, and one caller leaving
      // must not fail the others (the open is bounded by its own timeout; the session stays warm).
      const session = await openSession(target, {
        fetch: deps.fetch,
        timeoutMs: Math.min(timeoutMs, 10_000),
        ...(deps.maxMessageBytes ? { maxMessageBytes: deps.maxMessageBytes } : {}),
        // A thread's instance is not the server: its changes are not the catalogue's.
        ...(deps.changes && !thread ? deps.changes.watch(entry) : {}),
      });
      sessionSecrets.set(session, secrets);
      return session;
    } catch (error) {
      const reason = classifyFailure(error);
      // An initialize that timed out is a timeout (504), like a call that did.
      const kind = reason === "not_responding" ? "timeout" : "unreachable";
      const failure = new CallFailure(kind, scrubSecrets(describeFailure(error), secrets), { cause: error });
      // A caller's own token refused (401): theirs to renew; the server is fine. A 403 (the account may
      // not) is the upstream's answer to this caller, not a reason to authorize again.
      if (subject && reason === "access_denied") {
        if (refusedToken(error)) throw new NoOwnCredential(failure.message);
        throw new CallFailure("rpc", failure.message, { cause: error });
      }
      // An OAuth upstream that refuses the gateway's token needs an admin to authorize it again (a
      // client_credentials one gets a new token at the worker's next probe).
      const credential: CredentialOutcome =
        target.auth && reason === "access_denied" && !isMachineClient(server)
          ? { authorization: "required" }
          : {};
      await markFailed(deps, entry, reason, failure.message, credential);
      throw failure;
    }
  }

  const poolKey = thread ? `${server.id}#${thread}` : subject ? `${server.id}#@${subject}` : server.id;
  return deps.pool.use(poolKey, server.version, open, async (pooled) => {
    try {
      return await op(pooled.session, { timeoutMs, broken: pooled.broken, ...(signal ? { signal } : {}) });
    } catch (caught) {
      if (!(caught instanceof CallFailure)) throw caught;
      // Upstream error text (an error body, an RPC message) may quote the credentials it was sent.
      const error = new CallFailure(
        caught.kind,
        scrubSecrets(caught.message, sessionSecrets.get(pooled.session) ?? secrets),
        { cause: caught.cause },
      );
      if (error.kind === "session_expired") pooled.claimFailure();
      // A caller's own token refused mid-session (401: revoked at the AS) is theirs to renew; a 403 (the
      // account may not) is the upstream's answer to this caller. Neither says anything of the server.
      if (subject && error.kind !== "rpc" && classifyFailure(caught) === "access_denied") {
        pooled.claimFailure();
        if (refusedToken(caught)) throw new NoOwnCredential(error.message);
        throw new CallFailure("rpc", error.message, { cause: caught.cause });
      }
      if (await isTransportLoss(error, pooled)) {
        if (pooled.claimFailure()) await markFailed(deps, entry, callFailureReason(error), error.message);
        throw error;
      }
      throw answeredFailure(error);
    }
  });
}

/**
 * Whether a failed call means the server is gone for everyone: its session broke under the call, or
 * (for a connection or timeout failure) it no longer answers a ping. JSON-RPC errors, messages past the
 * size limit, cancellations and expired sessions (reopened by the caller) never are.
 */
async function isTransportLoss(error: CallFailure, pooled: PooledSession): Promise<boolean> {
  if (error.kind !== "unreachable" && error.kind !== "timeout") return false;
  if (pooled.broken.aborted) return true;
  return !(await alive(pooled.session));
}

/**
 * A call failure of a server that still answers: an HTTP refusal of this one call is the server's
 * answer (502 upstream.error), not unreachability.
 */
function answeredFailure(error: CallFailure): CallFailure {
  const status = transportHttpStatus(error.cause);
  if (error.kind !== "unreachable" || status === undefined) return error;
  return new CallFailure("rpc", `HTTP ${status} for this call: ${error.message}`, { cause: error.cause });
}

/** The reason a warm call's transport failure gives its server: an HTTP refusal says which (401/403, 5xx). */
function callFailureReason(error: CallFailure): FailureReason {
  if (error.kind === "timeout") return "not_responding";
  return transportHttpStatus(error.cause) === undefined ? "unreachable" : classifyFailure(error.cause);
}

/**
 * Whether the server behind a session still answers: a ping (2025), or `server/discover` (2026, which
 * has no ping). Any answer counts, an error included — only silence or a broken connection does not.
 */
async function alive(session: UpstreamSession): Promise<boolean> {
  try {
    if (session.era === "modern") await session.client.discover({ timeout: LIVENESS_PING_MS });
    else await session.client.ping({ timeout: LIVENESS_PING_MS });
    return true;
  } catch (error) {
    return error instanceof ProtocolError;
  }
}

/** Marks the server failed under its current generation and schedules the 15 s retry. */
async function markServerFailed(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  reason: FailureReason,
  error: string,
  credential: CredentialOutcome = {},
): Promise<void> {
  const generation = entry.status?.generation;
  if (generation === undefined) return;
  try {
    const at = new Date().toISOString();
    const written = await recordFailure(deps.store, entry.server.id, generation, {
      at,
      reason,
      error,
      ...credential,
    });
    deps.directory.invalidate();
    deps.logger.warn("server marked failed by a call", { server: entry.server.name, reason, written });
  } catch (failure) {
    deps.logger.error("could not mark server failed", { server: entry.server.name, ...errorFields(failure) });
  }
}

/** A call failure as the gateway's problem; the failure stays its cause (an upstream's JSON-RPC error in it). */
function toAppError(error: CallFailure, server: string): AppError {
  const cause = { cause: error };
  switch (error.kind) {
    case "timeout":
      return new AppError(
        "upstream.timeout",
        `Server '${server}' did not answer the call in time.`,
        {},
        cause,
      );
    case "rpc":
      return new AppError(
        "upstream.error",
        `Server '${server}' answered with an error: ${error.message}`,
        {},
        cause,
      );
    case "cancelled":
      return new AppError("upstream.unreachable", "The call was cancelled.", {}, cause);
    case "too_large":
      return new AppError("upstream.response_too_large", `Server '${server}': ${error.message}.`, {}, cause);
    default:
      return new AppError(
        "upstream.unreachable",
        `Server '${server}' could not be reached: ${error.message}`,
        {},
        cause,
      );
  }
}

/** True when the scope lets the caller use the server with this id. */
export function inScope(scope: ServerScope | undefined, serverId: string): boolean {
  return !scope || scope.has(serverId);
}

/** Ids of servers the chat switched off (a preference, not a boundary). */
function hiddenServers(deps: Pick<GatewayDeps, "directory">, chat: string | undefined): Promise<Set<string>> {
  return chat ? deps.directory.chatOff(chat) : Promise.resolve(new Set());
}

/** Whether an upstream refused the caller's token itself (401, not a 403 about what the account may do). */
function refusedToken(error: unknown): boolean {
  return refusalStatus(error) === 401;
}

/** Whether the gateway reaches the server as a machine client (client_credentials: no authorize step). */
function isMachineClient(server: PlainServer): boolean {
  return server.transport === "http" && server.auth?.type === "client_credentials";
}

/** Why a call found no credential, and what the status says: an authorize step, or the worker's grant. */
function noCredential(server: PlainServer): { message: string; outcome: CredentialOutcome } {
  if (isMachineClient(server))
    return {
      message: `The gateway holds no token for server '${server.name}' yet: the worker obtains one by the client_credentials grant at its next probe.`,
      outcome: { credentialExpiresAt: null },
    };
  return {
    message: `The gateway is not authorized at server '${server.name}': an admin must authorize it (POST /v1/servers/${server.id}/authorize).`,
    outcome: { authorization: "required", credentialExpiresAt: null },
  };
}

/**
 * The target of a server the gateway is an OAuth client of (authorization code or client_credentials):
 * the stored credential's bearer (the shared one, or in `per_user` mode the caller's own — none is
 * {@link NoOwnCredential}), asked before every request. When its token has expired or the upstream
 * answers 401, a session reads the store again (the worker refreshes shared credentials) and the
 * transport retries once with what it found; a caller's own credential it refreshes itself, under the
 * refresh lease (a rotated refresh token spent twice would revoke its family).
 */
async function withUpstreamCredential(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  target: UpstreamTarget,
  markFailed: typeof markServerFailed,
  addSecrets: (values: string[]) => void,
  subject?: string,
): Promise<UpstreamTarget> {
  const { server } = entry;
  const read = () =>
    deps.store.upstreamCredentials.get(server.id, subject ?? SHARED_SUBJECT).catch((error: unknown) => {
      if (error instanceof SealError) return undefined;
      throw error;
    });
  let held = await read();
  if (!held && subject) throw new NoOwnCredential(`No credential of ${subject} at '${server.name}'.`);
  if (!held) {
    const { message, outcome } = noCredential(server);
    await markFailed(deps, entry, "access_denied", message, outcome);
    throw new CallFailure("unreachable", message);
  }
  addSecrets(credentialSecrets(held));
  const reload = async () => {
    const stale = held;
    let fresh = await read();
    // A caller's own token: refreshed here when the store has nothing newer (under the refresh lease).
    if (subject && stale && fresh?.accessToken === stale.accessToken && stale.refreshToken) {
      const refreshed = await refreshHeldCredential(
        { credentials: deps.store.upstreamCredentials, fetch: deps.fetch, logger: deps.logger },
        server.id,
        subject,
        stale,
      );
      fresh = typeof refreshed === "string" ? undefined : refreshed;
    }
    if (!fresh) {
      // A caller's own credential deleted (key revoked, access removed): not used a moment longer.
      if (subject) held = undefined;
      return;
    }
    held = fresh;
    addSecrets(credentialSecrets(fresh));
  };
  return {
    ...target,
    auth: {
      token: async () => {
        if (held?.expiresAt && Date.parse(held.expiresAt) <= Date.now()) await reload();
        return held?.accessToken;
      },
      onUnauthorized: reload,
    },
  };
}
