import {
  PROBE_DEADLINE_MS,
  type ProbeOptions,
  type ProbeResult,
  probeUpstream,
  type SessionOpener,
  type UpstreamTarget,
} from "@mcpgw/upstream";

/** Extra time after the deadline before a hung attempt is force-settled. */
export const OUTER_GRACE_MS = 5_000;

/** Margin past an attempt's deadline and grace before its claim on the generation lapses. */
export const CLAIM_MARGIN_MS = 5_000;

/**
 * The longest one attempt can hold its generation: deadline + outer grace + margin (20 s by default).
 * Its claim lapses then (a worker that died mid-attempt blocks nothing), and the sweep deems a connect
 * job lost only after it.
 */
export function attemptWindowMs(deps: Pick<AttemptDeps, "deadlineMs" | "graceMs"> = {}): number {
  return (deps.deadlineMs ?? PROBE_DEADLINE_MS) + (deps.graceMs ?? OUTER_GRACE_MS) + CLAIM_MARGIN_MS;
}

/** What an attempt needs besides the server. */
export interface AttemptDeps {
  fetch: typeof fetch;
  deadlineMs?: number;
  graceMs?: number;
  /** The largest message an upstream may send (MAX_UPSTREAM_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** How the probe opens its session (default: over HTTP); unit tests link an in-memory upstream. */
  openSession?: SessionOpener;
  /** The probe itself (default {@link probeUpstream}); unit tests may wrap it to shape its result. */
  probe?: typeof probeUpstream;
  /** A check's memory of the server's 2025 surface (see {@link ProbeOptions.previousLegacy}). */
  previousLegacy?: ProbeOptions["previousLegacy"];
}

/**
 * One attempt on a ready target with its deadline, and an outer grace that force-settles
 * `failed/not_responding` whatever the upstream (or the client library) does — the status always leaves
 * `connecting`. With `listToolsIf` it is a liveness check (see {@link ProbeOptions.listToolsIf}).
 */
export async function attemptTarget(
  target: UpstreamTarget,
  deps: AttemptDeps,
  listToolsIf?: ProbeOptions["listToolsIf"],
): Promise<ProbeResult> {
  const at = new Date().toISOString();
  const deadlineMs = deps.deadlineMs ?? PROBE_DEADLINE_MS;
  const graceMs = deps.graceMs ?? OUTER_GRACE_MS;
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          ok: false,
          at,
          reason: "not_responding",
          error: `attempt did not settle within ${(deadlineMs + graceMs) / 1000} s`,
        }),
      deadlineMs + graceMs,
    );
  });
  try {
    const probe = (deps.probe ?? probeUpstream)(target, {
      fetch: deps.fetch,
      deadlineMs,
      ...(deps.maxMessageBytes ? { maxMessageBytes: deps.maxMessageBytes } : {}),
      ...(deps.openSession ? { open: deps.openSession } : {}),
      ...(listToolsIf ? { listToolsIf } : {}),
      ...(listToolsIf && deps.previousLegacy ? { previousLegacy: deps.previousLegacy } : {}),
    });
    return await Promise.race([probe, forced]);
  } finally {
    clearTimeout(timer);
  }
}
