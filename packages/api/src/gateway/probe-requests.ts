/**
 * The gateway asking the worker to look at a server now, not at its next sweep: a full `probe` when an
 * upstream says its tools changed, a `check` (liveness; tools listed only if its profile changed) when
 * its warm session suggests it is gone. The worker decides and writes the status; the gateway only asks,
 * at most once per server and kind per spacing, so a burst of signals is one job.
 */
import { errorFields, type Logger } from "@mcpgw/core";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";

/** What the gateway asks of the worker for a server. */
export type ProbeKind = "probe" | "check";

/** The least time between two requests of one kind for one server. */
export const PROBE_SPACING_MS: Record<ProbeKind, number> = { probe: 1_000, check: 5_000 };

/** Requests past which the record of the last ones is pruned (it keeps only those within spacing). */
const PRUNE_AT = 1_000;

/** Sends probe and check jobs for servers, spaced. */
export class ProbeRequests {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly deps: Pick<GatewayDeps, "store"> & { logger: Logger },
    private readonly spacingMs: Record<ProbeKind, number> = PROBE_SPACING_MS,
  ) {}

  /**
   * Asks for a `kind` job for `entry`'s server under its current generation, unless one was asked
   * within the spacing; `why` is logged when the request cannot be sent. True when a job was sent.
   */
  async request(entry: DirectoryEntry, kind: ProbeKind, why: string): Promise<boolean> {
    const { id } = entry.server;
    const generation = entry.status?.generation;
    if (generation === undefined) return false;
    const key = `${kind}:${id}`;
    const now = Date.now();
    if ((this.last.get(key) ?? Number.NEGATIVE_INFINITY) > now - this.spacingMs[kind]) return false;
    this.prune(now);
    this.last.set(key, now);
    try {
      await this.deps.store.jobs.send({ type: kind, serverId: id, generation });
      return true;
    } catch (error) {
      this.deps.logger.warn(`could not request a ${kind}`, {
        server: entry.server.name,
        why,
        ...errorFields(error),
      });
      return false;
    }
  }

  private prune(now: number): void {
    if (this.last.size < PRUNE_AT) return;
    const spacing = Math.max(...Object.values(this.spacingMs));
    for (const [key, at] of this.last) if (at <= now - spacing) this.last.delete(key);
  }
}
