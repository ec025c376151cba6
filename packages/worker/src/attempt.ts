import type { ServerRecord } from "@mcpgw/core";
import { PROBE_DEADLINE_MS, type ProbeResult, probeUpstream, type UpstreamTarget } from "@mcpgw/upstream";

/** Extra time after the deadline before a hung attempt is force-settled. */
export const OUTER_GRACE_MS = 5_000;

/** How to reach the stdio runner, when there is one. */
export interface RunnerEndpoint {
  url: string;
  token: string;
}

/** What an attempt needs besides the server. */
export interface AttemptDeps {
  fetch: typeof fetch;
  runner?: RunnerEndpoint | undefined;
  deadlineMs?: number;
  graceMs?: number;
}

/** The URL and headers a server is reached at: its own for HTTP, the runner's face for stdio. */
export function targetOf(server: ServerRecord, runner: RunnerEndpoint | undefined): UpstreamTarget | undefined {
  if (server.transport === "http") return { url: server.url, headers: server.headers };
  if (!runner) return undefined;
  return {
    url: `${runner.url.replace(/\/$/, "")}/servers/${encodeURIComponent(server.id)}/mcp`,
    headers: { authorization: `Bearer ${runner.token}` },
  };
}

/**
 * One attempt with its deadline, and an outer grace that force-settles `failed/not_responding`
 * whatever the upstream (or the client library) does — the status always leaves `connecting`.
 */
export async function attemptConnection(server: ServerRecord, deps: AttemptDeps): Promise<ProbeResult> {
  const at = new Date().toISOString();
  const target = targetOf(server, deps.runner);
  if (!target) {
    return { ok: false, at, reason: "failed", error: "stdio servers need the stdio runner, and none is configured (RUNNER_URL)" };
  }
  const deadlineMs = deps.deadlineMs ?? PROBE_DEADLINE_MS;
  const graceMs = deps.graceMs ?? OUTER_GRACE_MS;
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, at, reason: "not_responding", error: `attempt did not settle within ${(deadlineMs + graceMs) / 1000} s` }),
      deadlineMs + graceMs,
    );
  });
  try {
    return await Promise.race([probeUpstream(target, { fetch: deps.fetch, deadlineMs }), forced]);
  } finally {
    clearTimeout(timer);
  }
}
