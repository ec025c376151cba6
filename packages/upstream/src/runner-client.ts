import { AppError, type ErrorCode, placementKey, traceFields } from "@mcpgw/core";
import { connectionRefused } from "./classify-failure";
import { everyRunner, RunnerDirectory, type RunnerRoute, runnerFor } from "./runner-fleet";
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

/**
 * A client of the runner's control routes, authenticated with the runner token. In a fleet, a thread's
 * instance starts at the runner that owns it (asked again once if it moved meanwhile), and a stop goes
 * to every live runner (one that cannot be reached any more has no children left to stop).
 */
export function createRunnerClient(route: RunnerRoute, fetchImpl: typeof fetch = fetch): RunnerClient {
  const fleet = route instanceof RunnerDirectory;
  async function request(
    runner: RunnerEndpoint,
    method: string,
    path: string,
  ): Promise<Record<string, unknown>> {
    const base = runner.url.replace(/\/$/, "");
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
    if (response.status === 421) throw new MovedError();
    if (!response.ok) {
      const detail = typeof body.detail === "string" ? body.detail : `runner answered ${response.status}`;
      if (response.status === 400 && typeof body.code === "string" && PASSED_ON.has(body.code))
        throw new AppError(body.code as ErrorCode, detail);
      throw new AppError(RUNNER_STATUS_CODES[response.status] ?? "upstream.error", `Runner: ${detail}`);
    }
    return body;
  }
  /** `path` at the runner that owns `key`: asked again once when it answers that another does. */
  async function atOwner(key: string, method: string, path: string) {
    for (let attempt = 0; ; attempt++) {
      const runner = await runnerFor(route, key);
      if (!runner) throw new AppError("server.unavailable", "No stdio runner of the fleet is alive.");
      try {
        // Asked again: the runner must not refuse it for being full (see `RunnerEndpoint.followed`).
        return await request(runner, method, attempt > 0 ? `${path}?placement=followed` : path);
      } catch (error) {
        // Not served there (421), or that runner stopped (its connection refused): looked up again, once.
        const refused =
          error instanceof AppError && error.code === "upstream.unreachable" && connectionRefused(error);
        if (!(route instanceof RunnerDirectory) || attempt > 0 || !(error instanceof MovedError || refused))
          throw error;
        if (refused) route.markDown(runner.url);
        else route.refresh();
      }
    }
  }
  /** `path` at every runner: the sum of what each stopped. */
  async function atEvery(method: string, path: string): Promise<number> {
    const stopped = await Promise.all(
      (await everyRunner(route)).map((runner) =>
        request(runner, method, path).catch((error): Record<string, unknown> => {
          if (fleet && error instanceof AppError && error.code === "upstream.unreachable") return {};
          throw error;
        }),
      ),
    );
    return stopped.reduce((sum, body) => sum + Number(body.stopped ?? 0), 0);
  }
  return {
    async startThreadInstance(threadId, serverId) {
      const path = `/threads/${encodeURIComponent(threadId)}/servers/${encodeURIComponent(serverId)}`;
      const body = await atOwner(placementKey(serverId, threadId), "POST", path);
      return { pid: typeof body.pid === "number" ? body.pid : null };
    },
    stopThread(threadId) {
      return atEvery("DELETE", `/threads/${encodeURIComponent(threadId)}`);
    },
    stopServer(serverId, belowGeneration, options) {
      const drain = belowGeneration !== undefined && options?.drain ? "&drain=1" : "";
      const query = belowGeneration === undefined ? "" : `?below=${belowGeneration}${drain}`;
      return atEvery("DELETE", `/servers/${encodeURIComponent(serverId)}${query}`);
    },
  };
}

/** A runner answered that another runner owns the instance (421 `runner.not_owner`). */
class MovedError extends AppError {
  constructor() {
    super("runner.not_owner", "Another runner serves this instance.");
  }
}
