import { type AttemptOutcome, type ServerProfile, type ToolInfo, toolDefinitionHash } from "@mcpgw/core";
import {
  classifyFailure,
  connectionRefused,
  DeadlineError,
  describeFailure,
  isRefusedAnswer,
  refusalStatus,
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
  surfaceOf,
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
  /**
   * A check's memory of the server's 2025 surface (the stored profile's `legacy`): what the profile keeps
   * when this attempt's 2025 `initialize` neither answered nor was refused (a timeout, a reset), so a
   * flaky answer changes nothing. Called only then.
   */
  previousLegacy?: () => Promise<unknown>;
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
 * the limit, a reply the schema refuses), and — a runner of the fleet's face — whether that runner does
 * not serve the instance (`placement`: `moved`, 421: another holds it or it is full; `down`: it refused
 * the connection), so the instance is looked up again.
 */
export type ProbeResult =
  | (AttemptOutcome & {
      tools?: ToolInfo[];
      profile?: ServerProfile;
      deterministic?: boolean;
      placement?: "moved" | "down";
    })
  | AliveResult;

/**
 * One connection attempt: connect in the server's era (`server/discover`, else initialize) + tools/list
 * over every page (unless `listToolsIf` spares it), within the deadline — and, for a server that answered
 * in 2026, alongside it a 2025 `initialize` + tools/list ({@link legacySurface}, bounded apart), whose
 * surface and tool names the profile records when it answers; its failure never fails the probe. Never
 * throws: a failure comes back classified, its text scrubbed of the target's header values.
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
    const left = deadlineMs - (performance.now() - started);
    // The deployment's own runner fronts one child with both faces: nothing more to learn there.
    const legacy: Promise<unknown> =
      session.era === "modern" && !target.internal
        ? legacySurface(open, target, openOptions, Math.min(deadlineMs / 2, left)).then((found) =>
            found === "unknown" ? options.previousLegacy?.().catch(() => undefined) : found,
          )
        : Promise.resolve(undefined);
    if (options.listToolsIf) {
      const found = await legacy;
      let profile = profileOf(session, legacyNamed(found));
      let relist = options.listToolsIf(profile);
      // The stored 2025 list keeps only the names whose 2025 definition matched (see legacyNamed), which a
      // check — with no 2026 listing — cannot tell: its names are narrowed to the stored ones before they
      // count as a change (a name gone still is one), so such a server is not listed again every check.
      if (
        relist &&
        options.previousLegacy &&
        Array.isArray((found as { tools?: unknown } | undefined)?.tools)
      ) {
        const stored = await options.previousLegacy().catch(() => undefined);
        const narrowed = profileOf(session, legacyWithin(legacyNamed(found), stored));
        if (!options.listToolsIf(narrowed)) [profile, relist] = [narrowed, false];
      }
      if (!relist) {
        if (session.era === "legacy") await session.client.ping({ signal, timeout: deadlineMs });
        return { ok: true, alive: true, at, latencyMs, ...(profile ? { profile } : {}) };
      }
    }
    const [tools, surface] = await Promise.all([
      listAllTools(session, { signal, timeoutMs: deadlineMs }),
      legacy,
    ]);
    const profile = profileOf(session, legacyNamed(surface, tools));
    return { ok: true, at, latencyMs, toolCount: tools.length, tools, ...(profile ? { profile } : {}) };
  } catch (error) {
    const cause = controller.signal.aborted ? controller.signal.reason : error;
    const tooLarge = isMessageTooLarge(cause);
    const text = tooLarge
      ? tooLargeText(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)
      : describeFailure(cause);
    const placement = !target.internal
      ? undefined
      : refusalStatus(cause) === 421
        ? ("moved" as const)
        : connectionRefused(cause)
          ? ("down" as const)
          : undefined;
    return {
      ok: false,
      at,
      reason: classifyFailure(cause),
      error: scrubSecrets(text, Object.values(target.headers)),
      ...(tooLarge || isRefusedAnswer(cause) ? { deterministic: true } : {}),
      ...(placement ? { placement } : {}),
    };
  } finally {
    clearTimeout(timer);
    // A 2025 attempt still under way (the listing failed first) ends with the probe.
    controller.abort();
    await session?.close();
  }
}

/**
 * A server's 2025 surface (what its `initialize` said, and the names of the tools its 2025 session
 * lists, every page), tried on a server that answered in 2026 within `boundMs` on a signal of its own
 * (the probe's deadline aborts it too): `refused` when the server said it does not speak 2025
 * ({@link legacyVerdict}), `unknown` when it did not say (a timeout, a reset). Never throws.
 */
async function legacySurface(
  open: SessionOpener,
  target: UpstreamTarget,
  options: OpenOptions,
  boundMs: number,
): Promise<LegacySurface | "refused" | "unknown"> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DeadlineError(`no 2025 answer within ${boundMs / 1000} s`)),
    boundMs,
  );
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  let session: UpstreamSession | undefined;
  try {
    session = await open(target, { ...options, signal, timeoutMs: boundMs, prior: { kind: "legacy" } });
    if (session.era !== "legacy") return "refused";
    const surface = surfaceOf(session);
    // It speaks 2025: a listing that fails says nothing about whether it does.
    const listed = session.client.getServerCapabilities()?.tools
      ? await listAllTools(session, { signal, timeoutMs: boundMs }).catch(() => undefined)
      : [];
    if (!listed) return "unknown";
    return { ...surface, tools: listed };
  } catch (error) {
    return signal.aborted ? "unknown" : legacyVerdict(error);
  } finally {
    clearTimeout(timer);
    await session?.close();
  }
}

/** A 2025 surface as {@link legacySurface} found it (unbounded: {@link profileOf} bounds it). */
type LegacySurface = ReturnType<typeof surfaceOf> & { tools: ToolInfo[] };

/**
 * A 2025 surface with the names of its tools, as the profile keeps it: given the 2026 listing (`served`,
 * what the catalogue pins), only the tools whose 2025 definition is the same (pinned fields' hash) —
 * a 2025 caller's call goes to the 2025 session only for those, so it never runs under a definition
 * nobody approved; the others go over the 2026 session, where the drift check applies. Without a
 * listing (a check's first look), every name; a stored surface's names stay as they were.
 */
export function legacyNamed(found: unknown, served?: readonly ToolInfo[]): unknown {
  const tools = (found as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(tools)) return found;
  const hashes = served && new Map(served.map((tool) => [tool.name, toolDefinitionHash(tool)]));
  const names = tools.flatMap((tool: unknown) => {
    if (typeof tool === "string") return [tool];
    const info = tool as ToolInfo;
    return !hashes || hashes.get(info.name) === toolDefinitionHash(info) ? [info.name] : [];
  });
  return { ...(found as object), tools: names };
}

/** A named 2025 surface with only the tool names `stored` (a stored surface) has too; else as it is. */
export function legacyWithin(named: unknown, stored: unknown): unknown {
  const tools = (named as { tools?: unknown } | undefined)?.tools;
  const kept = (stored as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(tools) || !Array.isArray(kept)) return named;
  const storedNames = new Set(kept);
  return { ...(named as object), tools: tools.filter((name) => storedNames.has(name)) };
}

/**
 * What a failed 2025 attempt on a server that speaks 2026 means: `refused` — it does not speak 2025 —
 * only when the server said so (an HTTP 4xx but 408 and 429, a JSON-RPC error); anything else (a
 * timeout, a reset, a 5xx, a 408 or 429) is `unknown`: a check then keeps what it knew, so a flaky answer does not change the profile.
 */
export function legacyVerdict(error: unknown): "refused" | "unknown" {
  const status = refusalStatus(error);
  // A 408 or 429 says "not now", not "not this era".
  if (status !== undefined)
    return status >= 400 && status < 500 && status !== 408 && status !== 429 ? "refused" : "unknown";
  return rpcErrorCode(error) === undefined ? "unknown" : "refused";
}

/** The SDK's own codes for a closed connection and a request that timed out: not the server's answer. */
const LOCAL_RPC_CODES = new Set([-32000, -32001]);

/** The code of a JSON-RPC error the server answered with, anywhere in the error's causes. */
function rpcErrorCode(error: unknown): number | undefined {
  let link: unknown = error;
  for (let depth = 0; link && typeof link === "object" && depth < 8; depth++) {
    const { code, cause } = link as { code?: unknown; cause?: unknown };
    if (Number.isInteger(code) && !LOCAL_RPC_CODES.has(code as number) && (code as number) < 0)
      return code as number;
    link = cause;
  }
  return undefined;
}
