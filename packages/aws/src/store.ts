import type { AuditStore } from "./audit";
import type { ChangeFeed } from "./changes";
import type { ChatToggles } from "./chats";
import type { ConsoleSessionStore } from "./console-sessions";
import type { RunnerFleet } from "./fleet";
import type { JobQueue } from "./jobs";
import type { ApiKeyStore } from "./keys";
import type { LatencyHistory } from "./latency";
import type { OAuthStore } from "./oauth";
import type { Dependency, OutageLog } from "./outages";
import type { RateBudget } from "./rate-budget";
import type { CheckState } from "./readiness";
import type { SecretStore } from "./secrets";
import type { ServerRepository } from "./servers";
import type { StatusRepository } from "./statuses";
import type { SweepRuns } from "./sweep-runs";
import type { ThreadRegistry } from "./threads";
import type { ToolsetStore } from "./toolsets";
import type { UpstreamCredentialStore } from "./upstream-credentials";

/** The readiness checks of what a store lives on: the table, the job queue and the key. */
export interface ResourceChecks {
  /** One cheap check per dependency, in parallel, each bounded by `timeoutMs`. */
  check(timeoutMs?: number): Promise<Record<Dependency, CheckState>>;
}

/**
 * Everything the api, worker and runner read and write, as ports: no raw AWS client. `createStore()`
 * wires it to DynamoDB, SQS and KMS; `createMemoryStore()` is the in-memory one unit tests use.
 */
export interface Store {
  servers: ServerRepository;
  statuses: StatusRepository;
  /** What changed among the servers since a given time (the data plane's directory reads it). */
  changes: ChangeFeed;
  chats: ChatToggles;
  /** Each server's recent probe and call latencies, bounded (for the admin console's chart). */
  latency: LatencyHistory;
  threads: ThreadRegistry;
  keys: ApiKeyStore;
  /** Named selections of tools across servers. */
  toolsets: ToolsetStore;
  /** Admin console sign-ins. */
  consoleSessions: ConsoleSessionStore;
  secrets: SecretStore;
  /** The OAuth authorization server's clients, grants and access mappings. */
  oauth: OAuthStore;
  /** The gateway's own OAuth credentials at upstreams (sealed tokens per server and subject). */
  upstreamCredentials: UpstreamCredentialStore;
  jobs: JobQueue;
  /** Callers' call budgets per minute, shared by every gateway instance. */
  rateBudget: RateBudget;
  /** The stdio runners' registrations and the leases naming each instance's one owner. */
  fleet: RunnerFleet;
  /** The health sweep's runs: one at a time, never overlapping the last one's jobs. */
  sweeps: SweepRuns;
  /** Missing resources, logged once per interval by all who use the store. */
  outages: OutageLog;
  /** The audit trail: every tool call and admin change, append-only, expiring by TTL. */
  audit: AuditStore;
  /** What `/readyz` checks. */
  resources: ResourceChecks;
}
