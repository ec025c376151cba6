import type { Store } from "@mcpgw/aws";
import type { Logger } from "@mcpgw/core";
import type { OpenOptions, RunnerEndpoint, SessionPool } from "@mcpgw/upstream";
import type { CallLatency } from "./call-latency";
import type { Directory, DirectoryEntry } from "./directory";

/** What the data plane needs. */
export interface GatewayDeps {
  store: Store;
  logger: Logger;
  directory: Directory;
  pool: SessionPool;
  /** The outbound-guarded fetch upstream sessions use. */
  fetch: typeof fetch;
  runner?: RunnerEndpoint | undefined;
  /** How often an in-flight call logs a heartbeat. */
  heartbeatMs?: number;
  /** The largest message an upstream may send (MAX_UPSTREAM_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Where an upstream's own change notifications go (its catalogue refreshed, subscribers told). */
  changes?: UpstreamChanges;
  /** Each tool call's duration, summed up per server for its latency history (written off the path). */
  callLatency?: CallLatency;
  /** The admin function's public URL (PUBLIC_ADMIN_URL): where a per-user authorization comes back. */
  publicAdminUrl?: string | undefined;
}

/** What the data plane does when a warm upstream session says something changed. */
export interface UpstreamChanges {
  /**
   * The session callbacks for one server's warm session; `onLog` (what it logs outside any call) is
   * for a session shared by every caller only.
   */
  watch(entry: DirectoryEntry): Pick<OpenOptions, "onListChanged" | "onResourceUpdated" | "onLog">;
}
