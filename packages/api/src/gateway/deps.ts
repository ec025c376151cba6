import type { Store } from "@mcpgw/aws";
import type { AuditLog, Logger, Pinning } from "@mcpgw/core";
import type { OpenOptions, RunnerRoute, SessionLogListener, SessionPool } from "@mcpgw/upstream";
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
  runner?: RunnerRoute | undefined;
  /** How often an in-flight call logs a heartbeat. */
  heartbeatMs?: number;
  /** The largest message an upstream may send (MAX_UPSTREAM_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Where an upstream's own change notifications go (its catalogue refreshed, subscribers told). */
  changes?: UpstreamChanges;
  /** Where a shared upstream session's log lines outside any call go (its `/mcp/{server}` listeners). */
  sessionLogs?: UpstreamSessionLogs;
  /** Each tool call's duration, summed up per server for its latency history (written off the path). */
  callLatency?: CallLatency;
  /** The admin function's public URL (PUBLIC_ADMIN_URL): where a per-user authorization comes back. */
  publicAdminUrl?: string | undefined;
  /** Past this many tools in a caller's catalogue, `/mcp` lists in search mode (SEARCH_MODE_THRESHOLD; default 64). */
  searchModeThreshold?: number;
  /** The pinning of servers that set none (PINNING_DEFAULT; default `approve`). */
  pinningDefault?: Pinning | undefined;
  /** Where each tool call's audit event goes (none: not audited). */
  audit?: AuditLog | undefined;
}

/** What the data plane does when a warm upstream session says something changed. */
export interface UpstreamChanges {
  /** The session callbacks for one server's warm session. */
  watch(entry: DirectoryEntry): Pick<OpenOptions, "onListChanged" | "onResourceUpdated">;
}

/** What the data plane does with the log lines a shared upstream session sends outside any call. */
export interface UpstreamSessionLogs {
  /** The listener for one server's shared session, opened with `secrets` (scrubbed from each line). */
  listen(entry: DirectoryEntry, secrets: string[]): SessionLogListener;
}
