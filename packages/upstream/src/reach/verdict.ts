/**
 * The one place a failure to reach an upstream becomes a verdict: the reason a status records, whether
 * someone must authorize (`required`) or a machine client's grant was refused (`refused`), whether
 * trying again may help, and whose failure it is (the server's, or one caller's own).
 */
import {
  assertNever,
  type CredentialOutcome,
  type FailureReason,
  UNREADABLE_SECRETS,
  type UpstreamAuthorization,
} from "@mcpgw/core";
import { CallFailure } from "../call";
import { classifyFailure, refusalStatus, transportHttpStatus } from "../classify-failure";
import { NO_RUNNER_ERROR, type TargetSource } from "../target";

/** Why a server cannot be reached as this caller, and what follows from it. */
export interface Verdict {
  reason: FailureReason;
  /** What went wrong, in words (scrubbed of credentials by whoever built it). */
  error: string;
  /** Servers with `auth` only: an authorize step is needed (`required`) or the grant was refused (`refused`). */
  authorization?: UpstreamAuthorization;
  /** When the credential in question expires (null: none held), for the status. */
  credentialExpiresAt?: string | null;
  /** Whether the same request may succeed when tried again with nothing changed (a timeout, a lost connection). */
  retryable: boolean;
  /** Whose failure: the server's (its status says so) or this caller's alone (their own credential, a 403 to them). */
  scope: "server" | "caller";
}

/** How the gateway authenticates at a server: not at all, one shared OAuth credential, each caller's own, or as a machine client. */
export type CredentialMode = "none" | "shared" | "per_user" | "client_credentials";

/** The credential mode of a server (see {@link CredentialMode}). */
export function credentialMode(server: TargetSource): CredentialMode {
  switch (server.transport) {
    case "stdio":
      return "none";
    case "http":
      if (!server.auth) return "none";
      if (server.auth.type === "client_credentials") return "client_credentials";
      return server.auth.mode === "per_user" ? "per_user" : "shared";
    default:
      return assertNever(server);
  }
}

/** Whether a failure with this reason may pass by itself (the server unreachable or slow a moment). */
function retryable(reason: FailureReason): boolean {
  return reason === "unreachable" || reason === "not_responding";
}

/** A verdict on the server itself: what its status should say. */
export function serverVerdict(
  reason: FailureReason,
  error: string,
  credential: CredentialOutcome = {},
): Verdict {
  return { reason, error, ...credential, retryable: retryable(reason), scope: "server" };
}

/** A verdict on one caller's own access (`required`: they must authorize their own connection). */
export function callerVerdict(error: string, authorization?: "required"): Verdict {
  return {
    reason: "access_denied",
    error,
    ...(authorization ? { authorization } : {}),
    retryable: false,
    scope: "caller",
  };
}

/** The verdict on a stdio server with no runner to reach it through. */
export function noRunnerVerdict(): Verdict {
  return serverVerdict("failed", NO_RUNNER_ERROR);
}

/** The verdict on a server whose stored secrets (headers, env, `auth`) cannot be opened. */
export function unreadableVerdict(): Verdict {
  return serverVerdict("failed", UNREADABLE_SECRETS);
}

/** The credential part of a verdict, as a status records it. */
export function credentialOutcome(verdict: Verdict): CredentialOutcome {
  return {
    ...(verdict.authorization ? { authorization: verdict.authorization } : {}),
    ...(verdict.credentialExpiresAt !== undefined
      ? { credentialExpiresAt: verdict.credentialExpiresAt }
      : {}),
  };
}

/** What an admin does about a server whose credential is missing or refused. */
export function authorizeHint(serverId: string, perUser = false): string {
  const admin = `POST /v1/servers/${serverId}/authorize and open the authorizationUrl it returns`;
  return perUser
    ? `each user authorizes their own connection when a call first needs it; to catalogue the tools, an admin authorizes theirs: ${admin}`
    : `authorize the gateway at the upstream: ${admin}`;
}

/**
 * Why a call found no shared credential, and what the status says: an admin's authorize step, or (a
 * machine client) the worker's grant at its next probe.
 */
export function noCredentialVerdict(
  server: { id: string; name: string },
  mode: "shared" | "client_credentials",
): Verdict {
  switch (mode) {
    case "client_credentials":
      return serverVerdict(
        "access_denied",
        `The gateway holds no token for server '${server.name}' yet: the worker obtains one by the client_credentials grant at its next probe.`,
        { credentialExpiresAt: null },
      );
    case "shared":
      return serverVerdict(
        "access_denied",
        `The gateway is not authorized at server '${server.name}': an admin must authorize it (POST /v1/servers/${server.id}/authorize).`,
        { authorization: "required", credentialExpiresAt: null },
      );
    default:
      return assertNever(mode);
  }
}

/**
 * A refusal of a caller's own token: a 401 is theirs to renew (they authorize again); a 403 (the
 * account may not) is the upstream's answer to this caller. Neither says anything of the server.
 */
function ownRefusal(error: unknown, message: string): Verdict {
  return callerVerdict(message, refusalStatus(error) === 401 ? "required" : undefined);
}

/**
 * The verdict on a session that could not be opened. `subject`: the caller whose own credential was
 * used (`per_user`). An OAuth upstream that refuses the gateway's shared token needs an admin to
 * authorize again (a client_credentials one gets a new token at the worker's next probe).
 */
export function openFailureVerdict(
  error: unknown,
  context: { mode: CredentialMode; subject?: string | undefined; message: string },
): Verdict {
  const reason = classifyFailure(error);
  if (context.subject && reason === "access_denied") return ownRefusal(error, context.message);
  const oauth = context.mode === "shared" || context.mode === "per_user";
  return serverVerdict(
    reason,
    context.message,
    oauth && reason === "access_denied" ? { authorization: "required" } : {},
  );
}

/**
 * The verdict on a call that failed on an open session (its message already scrubbed): a caller's own
 * token refused, or the reason its server gets should the failure prove a transport loss (an HTTP
 * refusal says which: 401/403, 5xx; a timeout is `not_responding`).
 */
export function callFailureVerdict(failure: CallFailure, context: { subject?: string | undefined }): Verdict {
  if (context.subject && failure.kind !== "rpc" && classifyFailure(failure) === "access_denied")
    return ownRefusal(failure, failure.message);
  if (failure.kind === "timeout") return serverVerdict("not_responding", failure.message);
  const reason =
    transportHttpStatus(failure.cause) === undefined ? "unreachable" : classifyFailure(failure.cause);
  return serverVerdict(reason, failure.message);
}

/** The call failure a verdict on a session's open becomes: a timeout (504), else unreachable (502). */
export function openFailure(verdict: Verdict, cause?: unknown): CallFailure {
  return new CallFailure(
    verdict.reason === "not_responding" ? "timeout" : "unreachable",
    verdict.error,
    cause === undefined ? {} : { cause },
  );
}
