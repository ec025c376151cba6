import type { JobQueue } from "@mcpgw/aws";
import { errorFields, type Logger } from "@mcpgw/core";

/** How long a burst of list_changed notifications of one server is gathered into one probe. */
export const DEFAULT_RELAY_DEBOUNCE_MS = 250;

/**
 * Turns a child's `notifications/{tools,resources,prompts}/list_changed` into a probe job for its
 * server, so the catalogue is refreshed at once rather than at the next sweep. A burst is gathered:
 * the first notification schedules one job `debounceMs` later, and those until then ride along (the
 * job carries the newest generation heard). The worker drops a job of a stale generation as usual.
 */
export class ProbeRelay {
  private readonly pending = new Map<string, { generation: number; timer: NodeJS.Timeout }>();
  private readonly debounceMs: number;
  private closed = false;

  constructor(private readonly options: { jobs: JobQueue; logger: Logger; debounceMs?: number }) {
    this.debounceMs = options.debounceMs ?? DEFAULT_RELAY_DEBOUNCE_MS;
  }

  /** A child of `serverId` spawned for `generation` said a list of it changed. */
  changed(serverId: string, generation: number): void {
    if (this.closed) return;
    const pending = this.pending.get(serverId);
    if (pending) {
      pending.generation = Math.max(pending.generation, generation);
      return;
    }
    const timer = setTimeout(() => void this.send(serverId), this.debounceMs);
    this.pending.set(serverId, { generation, timer });
  }

  /** Drops what is still gathering (runner stop). */
  close(): void {
    this.closed = true;
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  private async send(serverId: string): Promise<void> {
    const pending = this.pending.get(serverId);
    this.pending.delete(serverId);
    if (!pending) return;
    const { generation } = pending;
    try {
      await this.options.jobs.send({ type: "probe", serverId, generation });
      this.options.logger.info("probe requested: the child's list changed", { serverId, generation });
    } catch (error) {
      this.options.logger.warn("could not request a probe after a list change", {
        serverId,
        generation,
        ...errorFields(error),
      });
    }
  }
}
