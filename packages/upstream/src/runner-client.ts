import { AppError, type ErrorCode, traceFields } from "@mcpgw/core";
import type { RunnerEndpoint } from "./target";

/** Thread lifecycle calls to the stdio runner (its MCP faces are reached through `targetOf`). */
export interface RunnerClient {
  /** Starts (or keeps) the thread's instance of a server; resolves once it is initialized. */
  startThreadInstance(threadId: string, serverId: string): Promise<{ pid: number | null }>;
  /** Ends every instance of the thread; resolves to how many were running. */
  stopThread(threadId: string): Promise<number>;
  /**
   * Ends the children of a deleted, disabled or reconfigured server — those of generations below
   * `belowGeneration`, or all — and resolves once they, their dirs and secret files are gone. With
   * `drain` (a newer generation settled) it resolves at once: they take no new calls and are stopped
   * once the calls on them have ended (bounded by the server's call timeout, at most 60 s).
   */
  stopServer(serverId: string, belowGeneration?: number, options?: { drain?: boolean }): Promise<number>;
}

/** How the runner's refusals reach admins: missing server, or the runner at its children cap. */
const RUNNER_STATUS_CODES: Record<number, ErrorCode> = { 404: "server.not_found", 409: "server.unavailable" };

/** The runner's refusals of the request itself, passed on as they are (code and sentence). */
const PASSED_ON: ReadonlySet<string> = new Set<ErrorCode>([
  "thread.worktree_missing",
  "thread.worktree_forbidden",
  "request.invalid",
]);

/** A client of the runner's control routes, authenticated with the runner token. */
export function createRunnerClient(runner: RunnerEndpoint, fetchImpl: typeof fetch = fetch): RunnerClient {
  const base = runner.url.replace(/\/$/, "");
  async function request(method: string, path: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetchImpl(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${runner.token}`, ...traceFields() },
        signal: AbortSignal.timeout(90_000),
      });
    } catch (cause) {
      throw new AppError("upstream.unreachable", "The stdio runner could not be reached.", {}, { cause });
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) {
      const detail = typeof body.detail === "string" ? body.detail : `runner answered ${response.status}`;
      if (response.status === 400 && typeof body.code === "string" && PASSED_ON.has(body.code))
        throw new AppError(body.code as ErrorCode, detail);
      throw new AppError(RUNNER_STATUS_CODES[response.status] ?? "upstream.error", `Runner: ${detail}`);
    }
    return body;
  }
  return {
    async startThreadInstance(threadId, serverId) {
      const body = await request(
        "POST",
        `/threads/${encodeURIComponent(threadId)}/servers/${encodeURIComponent(serverId)}`,
      );
      return { pid: typeof body.pid === "number" ? body.pid : null };
    },
    async stopThread(threadId) {
      const body = await request("DELETE", `/threads/${encodeURIComponent(threadId)}`);
      return Number(body.stopped ?? 0);
    },
    async stopServer(serverId, belowGeneration, options) {
      const drain = belowGeneration !== undefined && options?.drain ? "&drain=1" : "";
      const query = belowGeneration === undefined ? "" : `?below=${belowGeneration}${drain}`;
      const body = await request("DELETE", `/servers/${encodeURIComponent(serverId)}${query}`);
      return Number(body.stopped ?? 0);
    },
  };
}
