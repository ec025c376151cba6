import type { UpstreamAuth } from "@mcpgw/core";
/**
 * What a target is made of: an HTTP server's URL and (opened) headers — and its opened `auth`, for
 * the token endpoint only, never sent to the upstream — or just a stdio server's id.
 */
export type TargetSource =
  | {
      transport: "http";
      id: string;
      url: string;
      headers: Record<string, string>;
      auth?: UpstreamAuth | undefined;
    }
  | {
      transport: "stdio";
      id: string;
      /** An older generation that serves while a newer one connects: the runner keeps its child. */
      generation?: number | undefined;
    };

import { assertNever } from "@mcpgw/core";
import type { UpstreamTarget } from "./session";

/** How to reach the stdio runner, when there is one. */
export interface RunnerEndpoint {
  url: string;
  token: string;
  /** Asked after another runner of the fleet refused the instance: this one must not refuse it for being full. */
  followed?: boolean;
}

/** Why a server has no target: a stdio server without a runner. */
export const NO_RUNNER_ERROR = "stdio servers need the stdio runner, and none is configured (RUNNER_URL)";

/**
 * The URL and headers a server is reached at: its own for HTTP; for stdio, the runner's
 * streamable-HTTP face of it (optionally one thread's instance), naming the `caller` principal when
 * there is one (`…/callers/{caller}/mcp`: the runner keeps a `per_caller` server's child per caller,
 * and hands a child's requests for input only to the caller of the call). Undefined without a runner.
 */
export function targetOf(
  server: TargetSource,
  runner: RunnerEndpoint | undefined,
  thread?: string,
  caller?: string,
): UpstreamTarget | undefined {
  switch (server.transport) {
    case "http":
      return { url: server.url, headers: server.headers };
    case "stdio": {
      if (!runner) return undefined;
      const base = `${runner.url.replace(/\/$/, "")}/servers/${encodeURIComponent(server.id)}`;
      const instance = thread ? `${base}/threads/${encodeURIComponent(thread)}` : base;
      const path = caller ? `${instance}/callers/${encodeURIComponent(caller)}/mcp` : `${instance}/mcp`;
      const query = new URLSearchParams({
        ...(server.generation === undefined ? {} : { generation: String(server.generation) }),
        ...(runner.followed ? { placement: "followed" } : {}),
      }).toString();
      return {
        url: query ? `${path}?${query}` : path,
        headers: { authorization: `Bearer ${runner.token}` },
        internal: true,
      };
    }
    default:
      return assertNever(server);
  }
}
