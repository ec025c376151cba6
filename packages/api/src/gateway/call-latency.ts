import type { Store } from "@mcpgw/aws";
import { callsPoint, errorFields, LATENCY_RINGS, type Logger } from "@mcpgw/core";

/** The calls to one server that ended within one slot of the calls ring. */
interface SlotCalls {
  serverId: string;
  /** The slot's number since the epoch: `floor(at / grainMs)`. */
  slot: number;
  count: number;
  errors: number;
  maxMs: number;
  /** Durations for the median: each call's up to {@link MAX_SAMPLES}, then a uniform sample of them. */
  samples: number[];
}

/** The most durations kept per server and slot (past it, a reservoir sample keeps the median fair). */
const MAX_SAMPLES = 1_024;

export interface CallLatencyOptions {
  /** How often ended slots are written (default: the calls ring's grain, 10 s); tests shorten it. */
  flushMs?: number;
}

/**
 * The gateway's tool calls, summed up per server and slot of the calls ring (10 s) in memory, and
 * written to the latency history once per server and ended slot by a timer, off the request path: a
 * call costs a counter and an array push, never a write. The timer runs only while calls wait to be
 * written, unref'd (it never holds a process open); `close` writes what is left, the slot under way
 * included. A write that fails is logged (a warning) and dropped: the history feeds a chart.
 */
export class CallLatency {
  private readonly grainMs = LATENCY_RINGS.calls.grainMs;
  private readonly flushMs: number;
  /** Each server's slot under way. */
  private readonly current = new Map<string, SlotCalls>();
  /** Slots a server's later call ended, waiting for the next flush. */
  private ended: SlotCalls[] = [];
  private readonly writing = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Pick<Store, "latency" | "outages">,
    private readonly logger: Logger,
    options: CallLatencyOptions = {},
  ) {
    this.flushMs = options.flushMs ?? this.grainMs;
  }

  /** Counts one call to `serverId` that took `ms`; `ok`: it got a result (a tool error is one). */
  record(serverId: string, ms: number, ok: boolean): void {
    const slot = Math.floor(Date.now() / this.grainMs);
    let calls = this.current.get(serverId);
    if (calls?.slot !== slot) {
      if (calls) this.ended.push(calls);
      calls = { serverId, slot, count: 0, errors: 0, maxMs: 0, samples: [] };
      this.current.set(serverId, calls);
    }
    calls.count++;
    if (!ok) calls.errors++;
    if (ms > calls.maxMs) calls.maxMs = ms;
    if (calls.samples.length < MAX_SAMPLES) calls.samples.push(ms);
    else {
      const index = Math.floor(Math.random() * calls.count);
      if (index < MAX_SAMPLES) calls.samples[index] = ms;
    }
    if (!this.timer) {
      this.timer = setInterval(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /**
   * Writes every ended slot — every slot, the one under way too, when `all` — as one point per server
   * and slot, in parallel; resolves when they are written (or logged as not).
   */
  flush(all = false): Promise<void> {
    const now = Math.floor(Date.now() / this.grainMs);
    const due = this.ended;
    this.ended = [];
    for (const [serverId, calls] of this.current) {
      if (!all && calls.slot >= now) continue;
      due.push(calls);
      this.current.delete(serverId);
    }
    if (this.current.size === 0) this.stopTimer();
    if (due.length === 0) return Promise.resolve();
    const written = this.write(due);
    this.writing.add(written);
    return written.finally(() => this.writing.delete(written));
  }

  /** Stops the timer and writes what is left (the process is closing). */
  async close(): Promise<void> {
    this.stopTimer();
    await Promise.all([this.flush(true), ...this.writing]);
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async write(due: SlotCalls[]): Promise<void> {
    const results = await Promise.allSettled(
      due.map(({ serverId, slot, samples, count, errors, maxMs }) =>
        this.store.latency.record(serverId, callsPoint(slot * this.grainMs, samples, count, errors, maxMs)),
      ),
    );
    const failed = results.filter((result) => result.status === "rejected");
    const first = failed[0];
    if (!first || this.store.outages.report(this.logger, first.reason)) return;
    this.logger.warn("call latency not recorded", {
      servers: failed.length,
      ...errorFields(first.reason),
    });
  }
}
