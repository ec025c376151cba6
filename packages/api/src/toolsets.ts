/**
 * Tool sets, shared by the admin and data planes: every set held in memory (one query per refresh, never one per call),
 * and each set resolved against a directory snapshot — its named tools and those its rules match, the
 * overrides it shows in their place.
 */
import type { Store, StoredToolset, ToolOverride } from "@mcpgw/aws";
import { ruleMatches, TOOL_SEPARATOR, type ToolInfo } from "@mcpgw/core";

/** What a set is resolved against: each server (by id) with its tools by qualified name (a directory snapshot). */
export interface ToolCatalogue {
  byId: ReadonlyMap<string, { server: { id: string; name: string }; tools: ReadonlyMap<string, ToolInfo> }>;
}

/** How old the in-memory sets may be when they answer (edits elsewhere show within it). */
export const TOOLSET_CACHE_MS = 1_000;
/** Misses (an unknown set name) re-read the sets at most this often. */
const MISS_SPACING_MS = 100;

/** The endpoint key under which `/mcp/sets/{name}` is served (server names never hold `/`). */
export const TOOLSET_ENDPOINT_PREFIX = "sets/";

/** The set a `/mcp/…` endpoint key names, if it names one. */
export function toolsetOfEndpoint(endpoint: string | undefined): string | undefined {
  return endpoint?.startsWith(TOOLSET_ENDPOINT_PREFIX)
    ? endpoint.slice(TOOLSET_ENDPOINT_PREFIX.length)
    : undefined;
}

type SetMap = Map<string, StoredToolset>;

/**
 * Every tool set by name, in memory: answered from memory while younger than `maxAgeMs` (and, up to
 * twice that, while a refresh runs in the background); an unknown name re-reads once (spaced), so a
 * set just made elsewhere is found. Writes in this process count at once (`changed`).
 */
export class ToolsetIndex {
  private current: { at: number; sets: SetMap } | undefined;
  private refreshing: Promise<SetMap> | undefined;
  private lastMissAt = 0;

  constructor(
    private readonly store: Pick<Store, "toolsets">,
    private readonly maxAgeMs = TOOLSET_CACHE_MS,
  ) {}

  /** Every set by name. */
  async all(): Promise<SetMap> {
    const current = this.current;
    const age = current ? Date.now() - current.at : Number.POSITIVE_INFINITY;
    if (current && age < this.maxAgeMs) return current.sets;
    if (current && age < 2 * this.maxAgeMs) {
      this.load().catch(() => undefined);
      return current.sets;
    }
    return this.load();
  }

  /** One set by name; undefined when there is none (after one fresh look). */
  async named(name: string): Promise<StoredToolset | undefined> {
    const found = (await this.all()).get(name);
    if (found || Date.now() - this.lastMissAt < MISS_SPACING_MS) return found;
    this.lastMissAt = Date.now();
    this.current = undefined;
    return (await this.all()).get(name);
  }

  /** A set was written or deleted in this process: the next look reads them again. */
  changed(): void {
    this.current = undefined;
  }

  private load(): Promise<SetMap> {
    this.refreshing ??= (async () => {
      const at = Date.now();
      const sets = new Map((await this.store.toolsets.list()).map((set) => [set.name, set] as const));
      this.current = { at, sets };
      return sets;
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }
}

const indexes = new WeakMap<object, ToolsetIndex>();

/** The one index of `store`'s tool sets in this process (shared by the admin and data planes). */
export function toolsetIndex(store: Pick<Store, "toolsets">): ToolsetIndex {
  let index = indexes.get(store);
  if (!index) {
    index = new ToolsetIndex(store);
    indexes.set(store, index);
  }
  return index;
}

/** A set resolved against the directory: its tools by qualified name, and how the set shows them. */
export interface ResolvedSet {
  /** Qualified name → the override the set shows it with (empty: none). */
  members: Map<string, ToolOverride>;
  /** Ids of the servers with a tool in the set. */
  servers: Set<string>;
}

const resolved = new WeakMap<ToolCatalogue, WeakMap<StoredToolset, ResolvedSet>>();

/**
 * The set's tools among the snapshot's: those it names (by server id) and those a rule matches, each
 * with its override. Kept per snapshot and set, so a warm call resolves nothing again.
 */
export function resolveSet(set: StoredToolset, snapshot: ToolCatalogue): ResolvedSet {
  let bySet = resolved.get(snapshot);
  if (!bySet) {
    bySet = new WeakMap();
    resolved.set(snapshot, bySet);
  }
  const known = bySet.get(set);
  if (known) return known;
  const named = new Set(set.tools);
  const members = new Map<string, ToolOverride>();
  const servers = new Set<string>();
  for (const entry of snapshot.byId.values()) {
    const { id, name: server } = entry.server;
    for (const [qualified, tool] of entry.tools) {
      const stored = storedToolName(id, server, qualified);
      const policyTool = { name: qualified, server, annotations: tool.annotations };
      const member =
        named.has(stored) ||
        set.rules.some(
          ({ serverId, ...rule }) =>
            (serverId === undefined || serverId === id) &&
            ruleMatches({ ...rule, ...(serverId !== undefined ? { server } : {}) }, policyTool),
        );
      if (!member) continue;
      members.set(qualified, set.overrides[stored] ?? {});
      servers.add(id);
    }
  }
  const result = { members, servers };
  bySet.set(set, result);
  return result;
}

/** `<server>__<tool>` as a set stores it: `<serverId>__<tool>`. */
export function storedToolName(serverId: string, server: string, qualified: string): string {
  return `${serverId}${TOOL_SEPARATOR}${qualified.slice(server.length + TOOL_SEPARATOR.length)}`;
}
