import type { AttemptOutcome, ServerProfile, ToolInfo } from "@mcpgw/core";
import {
  classifyFailure,
  DeadlineError,
  describeFailure,
  isRefusedAnswer,
  scrubSecrets,
} from "./classify-failure";
import { isMessageTooLarge, tooLargeText } from "./limits";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  listAllTools,
  type OpenOptions,
  openSession,
  profileOf,
  type SessionOpener,
  type UpstreamSession,
  type UpstreamTarget,
} from "./session";

/** Each attempt's own deadline. */
export const PROBE_DEADLINE_MS = 10_000;

export interface ProbeOptions {
  fetch: typeof fetch;
  deadlineMs?: number;
  /** The largest message the upstream may send (its tools/list pages included). */
  maxMessageBytes?: number;
  /** How the session is opened (default {@link openSession}, over HTTP). */
  open?: SessionOpener;
  /**
   * Makes the probe a liveness check: the tools are listed only when this says so of the profile the
   * session reported (e.g. it changed). Otherwise the session's connect is the check — a 2026 server's
   * `server/discover` alone; a 2025 one is also pinged after `initialize` — and the result is
   * {@link AliveResult}.
   */
  listToolsIf?: (profile: ServerProfile | undefined) => boolean;
}

/** A liveness check's success: the server answered, nothing was listed. */
export interface AliveResult {
  ok: true;
  alive: true;
  at: string;
  latencyMs: number;
  profile?: ServerProfile;
}

/**
 * A probe's outcome plus, on success, the tools it listed and what it learned of the server; on
 * failure, whether it is `deterministic` (trying again with nothing changed cannot help: a message past
 * the limit, a reply the schema refuses).
 */
export type ProbeResult =
  | (AttemptOutcome & { tools?: ToolInfo[]; profile?: ServerProfile; deterministic?: boolean })
  | AliveResult;

/**
 * One connection attempt: connect in the server's era (`server/discover`, else initialize) — a server
 * that answered in 2026 is also tried in 2025 (`initialize`, within half the deadline), and the profile
 * records that era's surface when it answers — + tools/list over every page (unless `listToolsIf`
 * spares it), within the deadline. Never throws:
 * a failure comes back classified, its text scrubbed of the target's header values.
 */
export async function probeUpstream(target: UpstreamTarget, options: ProbeOptions): Promise<ProbeResult> {
  const deadlineMs = options.deadlineMs ?? PROBE_DEADLINE_MS;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DeadlineError(`no answer within ${deadlineMs / 1000} s`)),
    deadlineMs,
  );
  const started = performance.now();
  const at = new Date().toISOString();
  const open = options.open ?? openSession;
  let session: UpstreamSession | undefined;
  let legacy: UpstreamSession | undefined;
  try {
    const signal = controller.signal;
    const openOptions: OpenOptions = {
      fetch: options.fetch,
      signal,
      timeoutMs: deadlineMs,
      ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
    };
    session = await open(target, openOptions);
    const latencyMs = Math.round(performance.now() - started);
    // The deployment's own runner fronts one child with both faces: nothing more to learn there.
    if (session.era === "modern" && !target.internal)
      legacy = await legacySurface(open, target, { ...openOptions, timeoutMs: deadlineMs / 2 });
    const profile = profileOf(session, legacy);
    if (options.listToolsIf && !options.listToolsIf(profile)) {
      if (session.era === "legacy") await session.client.ping({ signal, timeout: deadlineMs });
      return { ok: true, alive: true, at, latencyMs, ...(profile ? { profile } : {}) };
    }
    const tools = await listAllTools(session, { signal, timeoutMs: deadlineMs });
    return { ok: true, at, latencyMs, toolCount: tools.length, tools, ...(profile ? { profile } : {}) };
  } catch (error) {
    const cause = controller.signal.aborted ? controller.signal.reason : error;
    const tooLarge = isMessageTooLarge(cause);
    const text = tooLarge
      ? tooLargeText(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)
      : describeFailure(cause);
    return {
      ok: false,
      at,
      reason: classifyFailure(cause),
      error: scrubSecrets(text, Object.values(target.headers)),
      ...(tooLarge || isRefusedAnswer(cause) ? { deterministic: true } : {}),
    };
  } finally {
    clearTimeout(timer);
    await Promise.all([session?.close(), legacy?.close()]);
  }
}

/**
 * A 2025 session with a server that answered in 2026, when it also speaks 2025 (`initialize`); a
 * refusal, an error or no answer within `options.timeoutMs` means it does not (undefined).
 */
async function legacySurface(
  open: SessionOpener,
  target: UpstreamTarget,
  options: OpenOptions,
): Promise<UpstreamSession | undefined> {
  try {
    const session = await open(target, { ...options, prior: { kind: "legacy" } });
    if (session.era === "legacy") return session;
    await session.close();
  } catch {
    // Not a 2025 server as well: its 2026 surface is all there is.
  }
  return undefined;
}
