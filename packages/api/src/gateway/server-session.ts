import { recordFailure, SealError } from "@mcpgw/aws";
import { AppError, assertNever, errorFields, outsideTraces, servingOlder } from "@mcpgw/core";
import {
  CallFailure,
  type CallOptions,
  callFailureVerdict,
  connectionRefused,
  credentialMode,
  credentialOutcome,
  describeFailure,
  isVerdict,
  type OpenOptions,
  openFailure,
  openFailureVerdict,
  openSession,
  type PooledSession,
  type ReachPurpose,
  type ReachServer,
  RunnerDirectory,
  type RunnerLoss,
  reach,
  refusalStatus,
  runnerLoss,
  scrubSecrets,
  serverVerdict,
  threadKeySuffix,
  transportHttpStatus,
  type UpstreamSession,
  unreadableVerdict,
  type Verdict,
  withScrubbedData,
} from "@mcpgw/upstream";
import { ProtocolError } from "@modelcontextprotocol/server";
import { beginUpstreamAuthorization } from "../upstream-authorization";
import { AuthorizationNeeded } from "./authorization-needed";
import type { GatewayDeps } from "./deps";
import { type DirectoryEntry, servingGeneration } from "./directory";

/** What runs on a server's warm session. */
type SessionOp<T> = (session: UpstreamSession, options: CallOptions) => Promise<T>;

/** Who uses a server's session, and where. */
interface SessionCaller {
  signal?: AbortSignal | undefined;
  thread?: string | undefined;
  /** A `per_user` server's caller (`user:<sub>`, `key:<id>`, `admin`): whose credential and session. */
  subject?: string | undefined;
  /** A key caller's owner: who must sign in to open the key's authorization link. */
  keyOwner?: string | undefined;
  /**
   * A stdio server's caller (`user:<sub>`, `key:<id>`, `admin`), named to the runner: whose child (a
   * `per_caller` server's) and whose session; the runner hands a child's requests only to the caller.
   */
  caller?: string | undefined;
  /**
   * `legacy`: a dual-era server's 2025 session — a second pooled session, opened with `initialize` and
   * keyed apart from its 2026 one (a per-user server's is the caller's own, as the 2026 one is). Its
   * failures are this caller's: the server's status describes the era it negotiated.
   */
  era?: "legacy" | undefined;
  /** The session is opened by the gateway itself (to listen), not for a call: its failures mark nothing. */
  quiet?: boolean | undefined;
}

/** Raised inside a session's open or use: the reach verdict says this caller must authorize their own connection. */
class OwnAuthorizationRequired extends Error {}

const LIVENESS_PING_MS = 2_000;

/**
 * What each pooled session was opened with: its header values, so warm-path failures are scrubbed too,
 * and its URL (a fleet's runner that refuses it is dropped from placement).
 */
const sessionsOpened = new WeakMap<object, { secrets: string[]; url: string }>();

/**
 * Runs `op` on the server's warm upstream session (opening it when cold: one config read with KMS,
 * one initialize, shared by concurrent callers). Only transport loss — the connection gone, or the
 * server no longer answering a liveness ping — evicts the session, marks the server failed once
 * (under the fence) and schedules its retry; any other failure (a JSON-RPC error, an HTTP refusal or
 * a timeout of this one call while the server still answers) goes back to this caller only. Error
 * text is scrubbed of credentials. Whether a failure is the server's or this caller's, and whether the
 * caller must authorize, is the reach verdict's (`@mcpgw/upstream`).
 */
export async function withServerSession<T>(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  op: SessionOp<T>,
  options: SessionCaller & {
    /** Whether a caller with no connection of their own is given an authorization to open (else refused). */
    authorize?: boolean;
  } = {},
): Promise<T> {
  const { server } = entry;
  const { subject, authorize = true } = options;
  const purpose = authorize ? "call" : "list";
  try {
    return await sessionOf(deps, entry, op, { ...options, purpose });
  } catch (error) {
    if (!(error instanceof OwnAuthorizationRequired) || !subject) throw error;
    switch (purpose) {
      case "list":
        throw new AppError(
          "upstream.authorization_required",
          `Server '${server.name}' needs you to authorize the gateway with your own account: call one of its tools to get the link.`,
        );
      case "call":
        break;
      default:
        return assertNever(purpose);
    }
    switch (server.transport) {
      case "http":
        throw new AuthorizationNeeded(
          server.name,
          await beginUpstreamAuthorization(deps, server, subject, options.keyOwner),
        );
      case "stdio":
        throw error;
      default:
        return assertNever(server);
    }
  }
}

/**
 * Marks the server's shared warm session (a call's with no caller of its own: not a `per_user`,
 * `per_caller` or thread session) used now — with `era`, a dual-era server's shared 2025 session — so
 * it does not idle out; false when it has none.
 */
export function touchServerSession(
  deps: Pick<GatewayDeps, "pool">,
  entry: DirectoryEntry,
  era?: "legacy",
): boolean {
  return deps.pool.touch(sessionKey(entry.server.id, { era }), servingGeneration(entry));
}

/**
 * What a caller's own verdict becomes: an authorization to open (401: their token refused, or none
 * held), else the upstream's answer to this caller (a 403: the account may not).
 */
function ownFailure(verdict: Verdict, cause?: unknown): Error {
  if (verdict.authorization === "required") return new OwnAuthorizationRequired(verdict.error);
  return new CallFailure("rpc", verdict.error, cause === undefined ? {} : { cause });
}

async function sessionOf<T>(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  op: SessionOp<T>,
  caller: SessionCaller & { purpose: ReachPurpose },
): Promise<T> {
  const { server } = entry;
  const { signal, thread, subject, purpose, era } = caller;
  const principal = server.transport === "stdio" ? caller.caller : undefined;
  const timeoutMs = server.timeoutSeconds * 1_000;
  // A session of the server's own (not a caller's, not a thread's), whose admin chose to relay what it
  // says outside calls: a tool logging about its caller there cannot be told from the server's own lines.
  const own = subject ?? principal;
  const relaysLogs = !own && !thread && server.transport === "http" && server.relaySessionLogs === true;
  let secrets: string[] = [];
  // A thread instance's failures are its own: the server's status describes the server, not one thread.
  // An older generation serving while a new one connects is not what the status describes either.
  const markFailed: typeof markServerFailed =
    thread || era || caller.quiet || servingOlder(entry.status) !== undefined
      ? async () => {}
      : markServerFailed;
  /**
   * A server's verdict on its status (for a cold open), and the failure this caller gets; `moved`: no
   * runner of the fleet served it where it was looked up, twice (the runner serving it was lost).
   */
  const failServer = async (verdict: Verdict, cause?: unknown, moved = false) => {
    const lost = moved ? await runnerLoss(deps.runner, server.transport, verdict) : undefined;
    await markFailed(deps, entry, lost?.verdict ?? verdict, lost);
    return openFailure(lost?.verdict ?? verdict, cause);
  };

  // Only a cold call gets here: one config read (with KMS), one initialize. Concurrent cold calls share it.
  // In a fleet, a runner that answers that it does not take the instance (421: another holds it now, or
  // it is full; the registry is read again), or that refuses the connection (it stopped; the directory
  // drops it), is followed by one more open, which looks the owner up again.
  const fleet =
    server.transport === "stdio" && deps.runner instanceof RunnerDirectory ? deps.runner : undefined;
  const open = () => openAt(true);
  async function openAt(followMove: boolean): Promise<UpstreamSession> {
    const record = await reachable(deps, entry).catch(async (error: unknown) => {
      if (!(error instanceof SealError)) throw error;
      throw await failServer(unreadableVerdict(), error);
    });
    if (!record) throw new AppError("server.not_found", `No server named '${server.name}'.`);
    const reached = await reach(
      {
        credentials: deps.store.upstreamCredentials,
        fetch: deps.fetch,
        logger: deps.logger,
        runner: deps.runner,
      },
      { server: record, purpose, subject, thread, caller: principal, followed: !followMove },
    );
    if (isVerdict(reached)) {
      if (reached.scope === "caller") throw ownFailure(reached);
      throw await failServer(reached);
    }
    secrets = reached.secrets;
    try {
      // Not bound to this caller's signal: concurrent cold calls share this open, and one caller leaving
      // must not fail the others (the open is bounded by its own timeout; the session stays warm). Nor
      // does it carry this caller's trace into what the shared session later sends for others.
      const session = await outsideTraces(() =>
        openSession(reached.target, {
          fetch: deps.fetch,
          timeoutMs: Math.min(timeoutMs, 10_000),
          ...(deps.maxMessageBytes ? { maxMessageBytes: deps.maxMessageBytes } : {}),
          // A thread's instance is not the server: its changes are not the catalogue's.
          ...(deps.changes && !thread ? heard(deps.changes.watch(entry), era) : {}),
          ...(deps.sessionLogs && relaysLogs
            ? { onSessionLog: deps.sessionLogs.listen(entry, secrets) }
            : {}),
          ...(era ? { prior: { kind: era } } : {}),
        }),
      );
      sessionsOpened.set(session, { secrets, url: reached.target.url });
      return session;
    } catch (error) {
      const moved = fleet !== undefined && (refusalStatus(error) === 421 || connectionRefused(error));
      if (moved && connectionRefused(error)) fleet.markDown(reached.target.url);
      else if (moved) fleet.refresh();
      if (moved && followMove) return openAt(false);
      // Still not where the instance is: its runner was lost, and its lease not yet free.
      if (moved)
        throw await failServer(
          serverVerdict("unreachable", scrubSecrets(describeFailure(error), secrets)),
          error,
          true,
        );
      const verdict = openFailureVerdict(error, {
        mode: credentialMode(record),
        subject,
        message: scrubSecrets(describeFailure(error), secrets),
      });
      if (verdict.scope === "caller") throw ownFailure(verdict, error);
      throw await failServer(verdict, error);
    }
  }

  const poolKey = sessionKey(server.id, { own, era, thread });
  return deps.pool.use(poolKey, servingGeneration(entry), open, async (pooled) => {
    try {
      return await op(pooled.session, { timeoutMs, broken: pooled.broken, ...(signal ? { signal } : {}) });
    } catch (caught) {
      if (!(caught instanceof CallFailure)) throw caught;
      // Upstream error text (an error body, an RPC message and its data) may quote the credentials it was sent.
      const opened = sessionsOpened.get(pooled.session);
      const sent = opened?.secrets ?? secrets;
      const cause =
        caught.cause instanceof ProtocolError ? withScrubbedData(caught.cause, sent) : caught.cause;
      const error = new CallFailure(caught.kind, scrubSecrets(caught.message, sent), { cause });
      if (error.kind === "session_expired") pooled.claimFailure();
      // A runner of the fleet that refused the connection never got the call (it stopped, or moved on):
      // like an expired session, the call is made again once on a session opened where the instance is now.
      // Only this call's own request counts: a call aborted with the session was perhaps sent.
      const refused = !pooled.broken.aborted && connectionRefused(error);
      if (fleet && refused) {
        fleet.markDown(opened?.url ?? "");
        pooled.claimFailure();
        throw new CallFailure("session_expired", "the runner serving this session has stopped", { cause });
      }
      const verdict = callFailureVerdict(error, { subject });
      // A caller's own token refused mid-session: nothing of the server.
      if (verdict.scope === "caller") {
        pooled.claimFailure();
        throw ownFailure(verdict, caught.cause);
      }
      if (await isTransportLoss(error, pooled)) {
        // The one call that claims the session's failure records it (and reads the fleet, if any).
        if (pooled.claimFailure()) {
          const lost = await runnerLoss(deps.runner, server.transport, verdict);
          await markFailed(deps, entry, lost?.verdict ?? verdict, lost);
        }
        throw error;
      }
      throw answeredFailure(error);
    }
  });
}

/**
 * The pool's key of a server's session: `<server id>`, then the caller whose own it is (`#@<caller>`: a
 * `per_user` server's subject, a stdio server's caller), the era of a dual-era server's 2025 session
 * (`#~legacy`) and, last, a thread (`#<thread>`: the pool releases a thread's sessions by that suffix).
 * The caller and the thread go in URI-encoded (`encodeURIComponent`): no name of either can reach into
 * another part of the key and so into another's session.
 */
export function sessionKey(
  serverId: string,
  { own, era, thread }: { own?: string | undefined; era?: "legacy" | undefined; thread?: string | undefined },
): string {
  const caller = own ? `#@${encodeURIComponent(own)}` : "";
  return `${serverId}${caller}${era ? `#~${era}` : ""}${thread ? threadKeySuffix(thread) : ""}`;
}

/**
 * What a server's session hears of it: everything on its one session; on a dual-era server's 2025
 * session only resource updates (its subscriptions are made there), list changes being its 2026 one's.
 */
function heard(watch: Listeners, era: SessionCaller["era"]): Listeners {
  if (!era) return watch;
  return watch.onResourceUpdated ? { onResourceUpdated: watch.onResourceUpdated } : {};
}

/** What a session tells of its server as it lives. */
type Listeners = Pick<OpenOptions, "onListChanged" | "onResourceUpdated">;

/** Reads of a handed-over server's kept config and status before a call is refused as connecting. */
const SERVING_READS = 3;

/**
 * What a server is reached as: an HTTP server's record with its headers and `auth` opened (one read,
 * KMS), or a stdio server's id (the runner opens its env). Undefined when the server is gone.
 */
async function reachable(deps: GatewayDeps, entry: DirectoryEntry): Promise<ReachServer | undefined> {
  const { server } = entry;
  const older = servingOlder(entry.status);
  switch (server.transport) {
    case "http": {
      if (older === undefined) return deps.store.servers.get(server.id);
      // The generation that serves while a new one connects: its config as it was kept. The view (≤ 2 s
      // old) may be behind, and the kept config and the status change together but are read apart (a
      // settle or a later edit may fall between the reads): what serves now is read again until the two
      // agree — the current config once connected, or the config kept for the generation that serves.
      let serving: number | undefined = older;
      for (let read = 1; ; read++) {
        const kept = await deps.store.servers.getServing(server.id);
        if (kept !== undefined && kept.generation === serving) {
          const { generation: _generation, ...record } = kept;
          return record;
        }
        const now = await deps.store.statuses.get(server.id);
        if (now?.state === "connected") return deps.store.servers.get(server.id);
        serving = servingOlder(now);
        if (serving === undefined || read === SERVING_READS)
          throw new AppError(
            "server.unavailable",
            `Server '${server.name}' is ${now?.state ?? "connecting"}.`,
            {
              state: now?.state ?? "connecting",
            },
          );
      }
    }
    case "stdio":
      // Named to the runner, which keeps an older generation's child while a newer one connects.
      return { transport: "stdio", id: server.id, name: server.name, generation: servingGeneration(entry) };
    default:
      return assertNever(server);
  }
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

/**
 * Whether the server behind a session still answers: a ping (2025), or `server/discover` (2026, which
 * has no ping), within 2 s. Any answer counts, an error included — only silence or a broken connection
 * does not.
 */
export async function alive(session: UpstreamSession): Promise<boolean> {
  try {
    if (session.era === "modern") await session.client.discover({ timeout: LIVENESS_PING_MS });
    else await session.client.ping({ timeout: LIVENESS_PING_MS });
    return true;
  } catch (error) {
    return error instanceof ProtocolError;
  }
}

/**
 * Marks the server failed under its current generation, as the verdict says, and schedules the 15 s
 * retry — or, its runner `lost`, moving (`connecting`), retried once that runner has lapsed.
 */
async function markServerFailed(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  verdict: Verdict,
  lost?: RunnerLoss,
): Promise<void> {
  const generation = entry.status?.generation;
  if (generation === undefined) return;
  const { reason, error } = verdict;
  try {
    const at = new Date().toISOString();
    const written = await recordFailure(
      deps.store,
      entry.server.id,
      generation,
      { at, reason, error, ...credentialOutcome(verdict), ...(lost ? { moving: true } : {}) },
      lost?.retry,
    );
    deps.directory.invalidate();
    deps.logger.warn(lost ? "server's runner lost: it moves" : "server marked failed by a call", {
      server: entry.server.name,
      reason,
      written,
    });
  } catch (failure) {
    deps.logger.error("could not mark server failed", { server: entry.server.name, ...errorFields(failure) });
  }
}
