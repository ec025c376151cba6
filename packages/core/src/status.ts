import { z } from "zod";
import { attemptedThisGeneration, MAX_JOB_DELAY_SECONDS } from "./job";
import { ProtocolVersion, profileDigest, profileEras, type ServerProfile } from "./profile";

export const ServerState = z.enum(["connecting", "connected", "failed", "disabled"]);
export type ServerState = z.infer<typeof ServerState>;

/** Why a server is not connected: refused/DNS/TLS, 401/403, deadline, anything else. */
export const FailureReason = z.enum(["unreachable", "access_denied", "not_responding", "failed"]);
export type FailureReason = z.infer<typeof FailureReason>;

/**
 * A connected server's tools are listed again at least this often (a sweep's full probe); in between,
 * sweeps only check that it answers. Also the grain at which a healthy server's status moves.
 */
export const MAX_LISTING_AGE_MS = 10 * 60_000;

const HEARTBEAT_NOTE =
  "moves with every full probe (a connect, a retry, a re-list of the tools: at least every 10 minutes " +
  "while connected) and every failure; the sweep's liveness checks of a connected server write no status " +
  "while nothing changed";

/**
 * Whether an upstream that needs OAuth has a usable credential. `refused` is the client_credentials
 * grant's failure: no one can authorize a machine client, so `required` (which asks an admin to open
 * an authorization URL) would send them the wrong way — the fix is the client's id or secret.
 */
export const UpstreamAuthorization = z.enum(["required", "authorized", "refused"]);
export type UpstreamAuthorization = z.infer<typeof UpstreamAuthorization>;

/** What an attempt on a server with `auth` learned of its credential. */
export interface CredentialOutcome {
  authorization?: UpstreamAuthorization;
  credentialExpiresAt?: string | null;
}

/** A server's live status and connection diagnostics, as the API shows it. */
export const ServerStatus = z.object({
  state: ServerState,
  reason: FailureReason.nullable(),
  error: z.string().nullable(),
  toolCount: z.number().int().nonnegative(),
  lastConnectionAttemptAt: z.string().nullable().meta({ description: HEARTBEAT_NOTE }),
  lastSuccessfulConnectionAt: z.string().nullable().meta({ description: HEARTBEAT_NOTE }),
  lastConnectionFailureAt: z.string().nullable(),
  lastConnectionLatencyMs: z.number().nonnegative().nullable().meta({ description: HEARTBEAT_NOTE }),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable().optional().meta({
    description:
      "when a `failed` server is tried next (its retry; repeated failures back off from 15 s to 5 min, and a failure that retrying cannot cure waits the 5 min); null otherwise",
  }),
  /** The protocol revision the last successful session negotiated; absent until one reported it. */
  protocolVersion: ProtocolVersion.optional().meta({
    description: "the MCP protocol revision the last successful connection negotiated; absent until one has",
  }),
  /** The revisions the server speaks, as its last listing found: the negotiated one, then its 2025 one. */
  eras: z.array(ProtocolVersion).max(2).optional().meta({
    description:
      'the MCP protocol revisions the server speaks, as the last successful connection found: the negotiated one first, then the 2025 one of a server that also answers a 2025 `initialize` (e.g. `["2026-07-28", "2025-11-25"]`); absent until one has',
  }),
  authorization: UpstreamAuthorization.optional().meta({
    description:
      "servers with `auth` only: `required` — no usable credential; an admin must `POST /v1/servers/{id}/authorize` and open the URL it returns; `authorized` — the gateway holds one; `refused` (`client_credentials` only) — the authorization server refused the grant: correct `auth` (client id, secret)",
  }),
  pendingChanges: z.number().int().nonnegative().optional().meta({
    description:
      "tool definition changes waiting for an admin's approval (GET /v1/servers/{id}/changes); 0 when none",
  }),
  credentialExpiresAt: z.string().nullable().optional().meta({
    description:
      "servers with `auth` only: when the upstream access token expires (the worker refreshes it, or obtains a new one, before)",
  }),
});
export type ServerStatus = z.infer<typeof ServerStatus>;

/**
 * The status as stored: the API view plus the generation fence, and when the current generation began
 * (`supersededAt`: the create, edit or reconnect that asked for a new attempt).
 */
export type StoredStatus = ServerStatus & {
  generation: number;
  supersededAt: string | null;
  /** When the tools were last listed (a full probe's success); absent before the first. Internal. */
  toolsListedAt?: string;
  /** The {@link profileDigest} of the profile that listing saw: a check that sees another lists again. */
  profileDigest?: string;
  /**
   * The generation that was `connected` when a change reaching the upstream superseded it, and when:
   * it serves calls (from the config kept beside the status) while the new generation is `connecting`,
   * within {@link SERVING_MAX_AGE_MS}. Internal.
   */
  servingGeneration?: number;
  servingSince?: string;
  /** Failures in a row while `failed` (see {@link failureCountAfter}): the backoff's step. Internal. */
  failureCount?: number;
};

/** How long, at most, an older generation serves while a new one connects. */
export const SERVING_MAX_AGE_MS = 60_000;

/**
 * The older generation that serves calls now, if any: only while the new generation is `connecting`
 * (its failure, a disable or a delete ends it at once) and for at most {@link SERVING_MAX_AGE_MS}.
 */
export function servingOlder(status: StoredStatus | undefined, now = Date.now()): number | undefined {
  if (status?.state !== "connecting" || status.servingGeneration === undefined) return undefined;
  if (status.servingGeneration >= status.generation) return undefined;
  const since = status.servingSince === undefined ? Number.NaN : Date.parse(status.servingSince);
  if (!(now - since < SERVING_MAX_AGE_MS)) return undefined;
  return status.servingGeneration;
}

/** What a full probe's success records besides {@link attemptChanges}: when it listed, and what profile. */
export function listingChanges(
  at: string,
  profile: ServerProfile | undefined,
): Pick<StoredStatus, "toolsListedAt" | "profileDigest"> {
  return { toolsListedAt: at, profileDigest: profileDigest(profile) };
}

/** The sentence a server's status carries when its sealed values cannot be opened. */
export const UNREADABLE_SECRETS = "stored secrets cannot be opened";

/** The status of a server nobody has tried to reach yet. */
export function initialStatus(enabled: boolean): ServerStatus {
  return {
    state: enabled ? "connecting" : "disabled",
    reason: null,
    error: null,
    toolCount: 0,
    lastConnectionAttemptAt: null,
    lastSuccessfulConnectionAt: null,
    lastConnectionFailureAt: null,
    lastConnectionLatencyMs: null,
    lastError: null,
  };
}

/** The outcome of one connection attempt, as a worker reports it. */
export type AttemptOutcome = (
  | { ok: true; at: string; latencyMs: number; toolCount: number }
  | {
      ok: false;
      at: string;
      reason: FailureReason;
      error: string;
      /** Its stdio runner of the fleet was lost: the server is moving to another, not failing. */
      moving?: boolean;
    }
) &
  CredentialOutcome;

/** The credential fields of an outcome, when it carries them. */
function credentialChanges(outcome: CredentialOutcome): Partial<ServerStatus> {
  return {
    ...(outcome.authorization ? { authorization: outcome.authorization } : {}),
    ...(outcome.credentialExpiresAt !== undefined
      ? { credentialExpiresAt: outcome.credentialExpiresAt }
      : {}),
  };
}

/**
 * The fields one attempt sets; every other diagnostic keeps its earlier value. A success sets the
 * protocol revision of the `profile` its session reported (when it reported one); a failure makes the
 * server `failed`, unless it is `moving` (its runner was lost): then it is `connecting` again.
 */
export function attemptChanges(outcome: AttemptOutcome, profile?: ServerProfile): Partial<ServerStatus> {
  if (outcome.ok) {
    return {
      state: "connected",
      reason: null,
      error: null,
      toolCount: outcome.toolCount,
      lastConnectionAttemptAt: outcome.at,
      lastSuccessfulConnectionAt: outcome.at,
      lastConnectionLatencyMs: outcome.latencyMs,
      ...(profile ? { protocolVersion: profile.protocolVersion, eras: profileEras(profile) } : {}),
      ...credentialChanges(outcome),
    };
  }
  // A server whose runner was lost is `connecting` (to the runner it moves to); `lastError` says why.
  return {
    ...(outcome.moving
      ? { state: "connecting" as const, reason: null, error: null }
      : { state: "failed" as const, reason: outcome.reason, error: outcome.error }),
    toolCount: 0,
    lastConnectionAttemptAt: outcome.at,
    lastConnectionFailureAt: outcome.at,
    lastError: outcome.error,
    ...credentialChanges(outcome),
  };
}

/** The status after an attempt: diagnostics from before are kept, the attempt's own fields replace them. */
export function statusAfterAttempt(
  previous: ServerStatus,
  outcome: AttemptOutcome,
  profile?: ServerProfile,
): ServerStatus {
  return { ...previous, ...attemptChanges(outcome, profile) };
}

/**
 * Whether the health sweep should probe a server now: connected ones always (to notice an
 * unexpected death); others only when their chain went stale (lost): a failed server `staleMs` past its
 * `nextAttemptAt` (its backoff is respected), any other `staleMs` after its last attempt — so the sweep
 * never doubles a live retry chain.
 */
export function needsSweepProbe(
  status: ServerStatus | undefined,
  since: string,
  now: number,
  staleMs: number,
): boolean {
  if (!status || status.state === "disabled") return false;
  if (status.state === "connected") return true;
  const last = Date.parse(status.lastConnectionAttemptAt ?? since);
  const scheduled = status.state === "failed" ? Date.parse(status.nextAttemptAt ?? "") : Number.NaN;
  // No retry is scheduled further out than a job can be delayed: a far-off stored time cannot stall it.
  const due = Number.isNaN(scheduled) ? last : Math.min(scheduled, last + MAX_JOB_DELAY_SECONDS * 1000);
  return Number.isNaN(due) || now - due >= staleMs;
}

/**
 * What the health sweep does for one server:
 * - `disable` / `enable`: its status disagrees with its config (`enabled` but `disabled`, or the
 *   reverse) — a write was lost; supersede the status to match;
 * - `connect`: it is `connecting` and no attempt has started since its generation began, `graceMs` ago
 *   — its connect job was lost (a queue send that failed after the change committed);
 * - `check`: it is connected and its tools were listed less than `maxListingAgeMs` ago — a liveness
 *   check is enough;
 * - `probe`: connected with tools listed longer ago (or never), else as {@link needsSweepProbe};
 * - undefined: nothing to do.
 */
export function sweepAction(
  enabled: boolean,
  status: StoredStatus | undefined,
  since: string,
  now: number,
  {
    staleMs,
    graceMs,
    maxListingAgeMs = MAX_LISTING_AGE_MS,
  }: { staleMs: number; graceMs: number; maxListingAgeMs?: number },
): "disable" | "enable" | "connect" | "check" | "probe" | undefined {
  if (!status) return undefined;
  if (!enabled) return status.state === "disabled" ? undefined : "disable";
  if (status.state === "disabled") return "enable";
  const began = status.supersededAt ? Date.parse(status.supersededAt) : Number.NaN;
  if (status.state === "connecting" && !attemptedThisGeneration(status) && now - began >= graceMs)
    return "connect";
  if (status.state === "connected") {
    const listedAt = Date.parse(status.toolsListedAt ?? "");
    return now - listedAt < maxListingAgeMs ? "check" : "probe"; // NaN (never listed) → probe
  }
  return needsSweepProbe(status, since, now, staleMs) ? "probe" : undefined;
}
