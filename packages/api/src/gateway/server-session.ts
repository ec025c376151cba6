import { recordFailure, SealError } from "@mcpgw/aws";
import {
  AppError,
  type CredentialOutcome,
  errorFields,
  type FailureReason,
  type PlainServer,
  SHARED_SUBJECT,
  UNREADABLE_SECRETS,
} from "@mcpgw/core";
import {
  CallFailure,
  type CallOptions,
  classifyFailure,
  credentialSecrets,
  describeFailure,
  NO_RUNNER_ERROR,
  openSession,
  type PooledSession,
  refreshHeldCredential,
  refusalStatus,
  scrubSecrets,
  targetOf,
  transportHttpStatus,
  type UpstreamSession,
  type UpstreamTarget,
} from "@mcpgw/upstream";
import { ProtocolError } from "@modelcontextprotocol/server";
import { beginUpstreamAuthorization } from "../upstream-authorization";
import { AuthorizationNeeded } from "./authorization-needed";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";

/** Raised inside a session's open: the caller holds no usable credential of their own. */
class NoOwnCredential extends Error {}

const LIVENESS_PING_MS = 2_000;

/** The header values each pooled session was opened with, so warm-path failures are scrubbed too. */
const sessionSecrets = new WeakMap<object, string[]>();

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
