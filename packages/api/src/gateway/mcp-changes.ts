/**
 * Change notifications for MCP clients. Two sources:
 * - the directory: while some client listens (or spoke lately, so a baseline exists before its
 *   listen stream opens), the data plane's view is compared every second with the last one; a server that appeared, went, connected, failed, was enabled, disabled or renamed,
 *   or whose catalogue was rewritten (a probe, a sweep) tells its endpoints' listeners `tools`.
 * - the upstreams: a warm session that hears `list_changed` asks the worker for a probe at once
 *   (the new catalogue then reaches the directory, and from there the listeners); prompts and
 *   resources, read live, are announced straight away. While some client listens, each shared server
 *   that announces list changes has its session kept open (mcp-listening.ts), so a cold one is heard too.
 */
import { effectivePinning } from "@mcpgw/core";
import type { GatewayDeps, UpstreamChanges } from "./deps";
import type { DirectoryEntry, Snapshot } from "./directory";
import type { McpEndpoints } from "./mcp-endpoint";
import { UpstreamListening } from "./mcp-listening";
import { gatewayUri } from "./mcp-names";
import type { ProbeRequests } from "./probe-requests";

/** How often the directory is compared while someone listens. */
export const WATCH_INTERVAL_MS = 1_000;

/** Watches for what MCP clients must be told, and tells them. */
export class ChangeWatcher implements UpstreamChanges {
  private readonly seen = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private endpoints: McpEndpoints | undefined;
  private deps: Pick<GatewayDeps, "directory" | "store" | "pinningDefault"> | undefined;
  private listening: UpstreamListening | undefined;
  private probes: ProbeRequests | undefined;

  constructor(private readonly intervalMs = WATCH_INTERVAL_MS) {}

  /**
   * Starts telling `endpoints`' listeners what changes in `deps`' directory and upstreams; an upstream's
   * tools change is a probe asked through `probes`.
   */
  start(deps: GatewayDeps, endpoints: McpEndpoints, probes: ProbeRequests): void {
    this.deps = deps;
    this.probes = probes;
    this.listening = new UpstreamListening(deps);
    this.endpoints = endpoints;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    endpoints.onWatched = () => void this.tick();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The callbacks of one server's warm upstream session. */
  watch(entry: DirectoryEntry) {
    // The server's name as last seen: a rename keeps the session (it reaches nothing upstream).
    const { id } = entry.server;
    const nameNow = () => this.seen.get(id)?.split("\0")[0] || entry.server.name;
    return {
      // Listeners hear it at once (prompts and resources are read live); a tools change also asks the
      // worker for a probe, whose new catalogue the directory then serves (and tells again). A server
      // whose tools are pinned for approval serves nothing new until an admin decides: not told now.
      onListChanged: (kind: "tools" | "prompts" | "resources") => {
        const pinned = effectivePinning(entry.server, this.deps?.pinningDefault ?? "approve") === "approve";
        if (kind !== "tools" || !pinned) this.endpoints?.notify(nameNow(), kind);
        if (kind === "tools") void this.probes?.request(entry, "probe", "list_changed");
      },
      onResourceUpdated: (uri: string) => {
        const name = nameNow();
        this.endpoints?.resourceUpdated(name, gatewayUri(name, uri), uri);
      },
    };
  }

  /** Compares the directory with the last look; tells the endpoints of every server that changed. */
  tick(): Promise<void> {
    this.looking ??= this.look().finally(() => {
      this.looking = undefined;
    });
    return this.looking;
  }

  private async look(): Promise<void> {
    const { endpoints, deps } = this;
    if (!endpoints?.watched || !deps) {
      this.seen.clear();
      return;
    }
    let snapshot: Snapshot;
    try {
      snapshot = await deps.directory.snapshot();
    } catch {
      return; // The directory logs its own failures; the next tick looks again.
    }
    this.listening?.keep(snapshot.byId.values(), endpoints.holdingUpstreamState());
    const first = this.seen.size === 0;
    const current = new Map(
      [...snapshot.byId.values()].map((entry) => [entry.server.id, fingerprint(entry)]),
    );
    const changed = new Set<string>();
    for (const [id, print] of current)
      if (this.seen.get(id) !== print) changed.add(print.split("\0")[0] ?? "");
    for (const [id, print] of this.seen) if (!current.has(id)) changed.add(print.split("\0")[0] ?? "");
    this.seen.clear();
    for (const [id, print] of current) this.seen.set(id, print);
    // A first look has nothing to compare with; an empty directory keeps one entry so it is not "first".
    if (current.size === 0) this.seen.set("", "");
    if (first) return;
    for (const name of changed) if (name) endpoints.notify(name, "tools");
  }
}

/** Fingerprints by entry: the directory keeps an unchanged server's entry, so each is computed once. */
const fingerprints = new WeakMap<DirectoryEntry, string>();

/** What a listener of a server's tools would notice: name, state, enablement and catalogue. */
function fingerprint(entry: DirectoryEntry): string {
  let print = fingerprints.get(entry);
  if (print === undefined) {
    print = computeFingerprint(entry);
    fingerprints.set(entry, print);
  }
  return print;
}

function computeFingerprint(entry: DirectoryEntry): string {
  const tools = [...entry.tools.values()].map((tool) => JSON.stringify(tool)).join("\n");
  return [entry.server.name, entry.server.enabled, entry.status?.state, tools.length, hash(tools)].join("\0");
}

/** A cheap 32-bit FNV-1a of a string (change detection, not security). */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 0x01000193);
  return value >>> 0;
}
