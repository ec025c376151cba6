/**
 * The worker's probe of a server, as whoever the gateway reaches it as: no one, the shared credential,
 * the machine client, or — `per_user` — the admin's own connection first, then the newest users'.
 * Every credential decision and verdict comes from {@link reach}.
 */
import { assertNever } from "@mcpgw/core";
import { refreshHeldCredential } from "../credential-refresh";
import { expiresWithinMargin, needsRefresh } from "../oauth-client";
import type { ProbeOptions, ProbeResult } from "../probe";
import { RunnerDirectory } from "../runner-fleet";
import type { UpstreamTarget } from "../session";
import { isVerdict, type ReachDeps, type ReachServer, reach } from "./reach";
import { authorizeHint, credentialMode, credentialOutcome, serverVerdict, type Verdict } from "./verdict";

/** What a probe needs: what reaching needs, and one attempt on a ready target (its deadline the caller's). */
export type ProbeServerDeps = ReachDeps & {
  attempt(target: UpstreamTarget, listToolsIf?: ProbeOptions["listToolsIf"]): Promise<ProbeResult>;
};

/** The admin's own connection to a per-user server (the API's `credentialSubject` of the admin). */
const ADMIN_SUBJECT = "admin";
/** The most per-user credentials one check refreshes (the rest wait for the next check). */
const MAX_REFRESHES_PER_CHECK = 25;
/** The most per-user connections one check tries before it calls the server unauthorized. */
const MAX_SUBJECTS_TRIED = 3;

/**
 * One probe of `server` (see {@link ProbeOptions.listToolsIf} for a liveness check). With a credential,
 * a renewal (refresh or grant) makes it a full probe, so the status shows the new expiry; a credential
 * missing or refused settles access_denied with `authorization` `required` (an authorize step helps)
 * or `refused` (a machine client's grant: fix its id or secret) — never a silent expiry.
 */
export async function probeServer(
  deps: ProbeServerDeps,
  server: ReachServer,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const at = new Date().toISOString();
  const mode = credentialMode(server);
  switch (mode) {
    case "none":
      return probePlain(deps, server, at, listToolsIf);
    case "client_credentials": {
      const outcome = await probeAs(deps, server, undefined, listToolsIf);
      return isVerdict(outcome) ? probeFailure(at, outcome) : outcome;
    }
    case "shared": {
      const outcome = await probeAs(deps, server, undefined, listToolsIf);
      return isVerdict(outcome) ? probeFailure(at, outcome, authorizeHint(server.id)) : outcome;
    }
    case "per_user":
      return probePerUser(deps, server, at, listToolsIf);
    default:
      return assertNever(mode);
  }
}

/**
 * A probe without a credential. A runner of the fleet that does not serve the instance (it moved, the
 * runner is full, or it stopped) sends the probe once more to where the instance is looked up now; a
 * failure there keeps its `placement` (the runner serving it was lost).
 */
async function probePlain(
  deps: ProbeServerDeps,
  server: ReachServer,
  at: string,
  listToolsIf: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const reached = await reach(deps, { server, purpose: "probe" });
  if (isVerdict(reached)) return probeFailure(at, reached);
  const first = await deps.attempt(reached.target, listToolsIf);
  const placement = first.ok ? undefined : first.placement;
  if (!placement || !(deps.runner instanceof RunnerDirectory)) return first;
  if (placement === "down") deps.runner.markDown(reached.target.url);
  else deps.runner.refresh();
  const again = await reach(deps, { server, purpose: "probe", followed: true });
  if (isVerdict(again)) return probeFailure(at, again);
  const last = await deps.attempt(again.target, listToolsIf);
  // Still not served where it is now (its lease held by a runner that stopped answering): unreachable,
  // as the gateway's second refusal is — the runner serving it was lost.
  return !last.ok && last.placement ? { ...last, reason: "unreachable" } : last;
}

/**
 * A per-user server's probe: every user's credential nearing expiry is refreshed, and the check runs
 * with the admin's own connection first (what an admin authorized to catalogue the tools), then the
 * newest ones; none that works → required.
 */
async function probePerUser(
  deps: ProbeServerDeps,
  server: ReachServer,
  at: string,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const held = (await deps.credentials.held(server.id)).sort(
    (a, b) => Number(b.subject === ADMIN_SUBJECT) - Number(a.subject === ADMIN_SUBJECT),
  );
  // The one checked first is refreshed by its check; the others' refreshes happen here.
  await refreshExpiring(
    deps,
    server.id,
    held.slice(1).filter((info) => expiresWithinMargin(info.expiresAt)),
  );
  let last = serverVerdict("access_denied", "no user has authorized the gateway at this upstream yet", {
    authorization: "required",
    credentialExpiresAt: null,
  });
  for (const { subject } of held.slice(0, MAX_SUBJECTS_TRIED)) {
    const outcome = await probeAs(deps, server, subject, listToolsIf);
    if (!isVerdict(outcome)) return outcome;
    last = outcome;
  }
  return probeFailure(at, last, authorizeHint(server.id, true));
}

/**
 * One probe as one subject: reached, attempted, and — when the upstream refuses the credential — reached
 * again for a renewed one (a renewed credential refused is the verdict).
 */
async function probeAs(
  deps: ProbeServerDeps,
  server: ReachServer,
  subject: string | undefined,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult | Verdict> {
  let reached = await reach(deps, { server, purpose: "probe", subject });
  for (;;) {
    if (isVerdict(reached)) return reached;
    const result = await deps.attempt(reached.target, reached.renewed ? undefined : listToolsIf);
    if (result.ok || result.reason !== "access_denied")
      return {
        ...result,
        authorization: "authorized",
        credentialExpiresAt: reached.credential?.expiresAt ?? null,
      };
    reached = await reach(deps, {
      server,
      purpose: "probe",
      subject,
      refused: { ...reached, error: result.error },
    });
  }
}

/** A probe's failure from a verdict, with what an admin does about it when that helps. */
export function probeFailure(at: string, verdict: Verdict, hint?: string): ProbeResult {
  return {
    ok: false,
    at,
    reason: verdict.reason,
    error: hint ? `${verdict.error}; ${hint}` : verdict.error,
    ...credentialOutcome(verdict),
  };
}

/** Refreshes per-user credentials nearing expiry (bounded per check; a failure is that user's alone). */
async function refreshExpiring(
  deps: ProbeServerDeps,
  serverId: string,
  expiring: Array<{ subject: string }>,
): Promise<void> {
  for (const { subject } of expiring.slice(0, MAX_REFRESHES_PER_CHECK)) {
    const held = await deps.credentials.get(serverId, subject).catch(() => undefined);
    if (held && needsRefresh(held))
      await refreshHeldCredential(
        { credentials: deps.credentials, fetch: deps.fetch, logger: deps.logger },
        serverId,
        subject,
        held,
      );
  }
}
