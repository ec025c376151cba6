/**
 * The gateway's metric instruments, made through `@opentelemetry/api` on the process's meter provider
 * (see {@link startMetrics}); without one they are the API's no-ops — but for the tool-call series,
 * which a producer on the reader holds ({@link toolCallProducer}). Call sites use the `record…`
 * functions (a few map lookups each). Labels are names, ids and outcomes only — never an argument,
 * header or env value — and their cardinality is bounded (see {@link LabelCap}).
 */
import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
} from "@opentelemetry/api";
import type { AggregationTemporality, MetricProducer } from "@opentelemetry/sdk-metrics";
import { ToolCallMetrics } from "./call-metrics";

/** The meter every instrument of the gateway is made on. */
export const METER_NAME = "mcpgw";
/** Distinct tool labels per server before the rest count as `other`. */
export const MAX_TOOLS_PER_SERVER = 200;
/** Distinct server labels before the rest count as `other`. */
export const MAX_SERVERS = 1_000;
/** The label value standing for every value past a cap. */
export const OTHER = "other";

/**
 * Caps the distinct values of a two-level label (server, then tool within it): the first `maxOuter`
 * servers and `maxInner` tools of each keep their names; later ones become {@link OTHER}.
 */
export class LabelCap {
  private readonly seen = new Map<string, Set<string>>();

  constructor(
    private readonly maxOuter = MAX_SERVERS,
    private readonly maxInner = MAX_TOOLS_PER_SERVER,
  ) {}

  /** The labels for (`server`, `tool`) under the caps: a new object each time (the caller may add to it). */
  labels(server: string, tool?: string): { server: string; tool?: string } {
    let tools = this.seen.get(server);
    if (!tools) {
      if (this.seen.size >= this.maxOuter)
        return { server: OTHER, ...(tool === undefined ? {} : { tool: OTHER }) };
      tools = new Set();
      this.seen.set(server, tools);
    }
    if (tool === undefined) return { server };
    if (!tools.has(tool)) {
      if (tools.size >= this.maxInner) return { server, tool: OTHER };
      tools.add(tool);
    }
    return { server, tool };
  }
}

/** A tool call's durations (ms): the whole call, and the part spent waiting on the upstream. */
export interface CallTimes {
  totalMs: number;
  upstreamMs: number;
}

/** What the observable gauges read: the gateway's pools (weakly held), the runner's children, the queue. */
const gaugeSources = {
  pools: new Set<WeakRef<{ readonly size: number }>>(),
  runnerChildren: new Set<() => Record<string, number>>(),
  /** The queue depth last read (once per sweep); undefined until one was. */
  queueDepth: undefined as number | undefined,
};

interface Instruments {
  probes: Counter;
  probeDuration: Histogram;
  jobAge: Histogram;
  rateLimited: Counter;
  fleetWrites: Counter;
}

let madeFor: MeterProvider | undefined;
let instruments: Instruments | undefined;
const cap = new LabelCap();

/** Makes the instruments (the observable gauges too) on the global meter provider set now. */
export function registerInstruments(): void {
  current();
}

/** The instruments on the current global meter provider (made again when another was set). */
function current(): Instruments {
  const provider = metrics.getMeterProvider();
  if (instruments && madeFor === provider) return instruments;
  const meter = provider.getMeter(METER_NAME);
  madeFor = provider;
  instruments = makeInstruments(meter);
  return instruments;
}

function makeInstruments(meter: Meter): Instruments {
  const ms = (name: string, description: string) => meter.createHistogram(name, { unit: "ms", description });
  meter
    .createObservableGauge("mcpgw_warm_sessions", {
      description: "Warm upstream sessions in the gateway's pool",
    })
    .addCallback((result) => {
      let sessions = 0;
      for (const ref of gaugeSources.pools) {
        const pool = ref.deref();
        if (pool) sessions += pool.size;
        else gaugeSources.pools.delete(ref);
      }
      if (gaugeSources.pools.size > 0) result.observe(sessions);
    });
  meter
    .createObservableGauge("mcpgw_runner_children", { description: "The runner's stdio children by state" })
    .addCallback((result) => {
      const byState: Record<string, number> = {};
      for (const read of gaugeSources.runnerChildren) {
        for (const [state, count] of Object.entries(read())) byState[state] = (byState[state] ?? 0) + count;
      }
      for (const [state, count] of Object.entries(byState)) result.observe(count, { state });
    });
  meter
    .createObservableGauge("mcpgw_runner_task_children", {
      description: "The runner task's stdio children, every state: the runner service scales on its average",
    })
    .addCallback((result) => {
      if (gaugeSources.runnerChildren.size === 0) return;
      let children = 0;
      for (const read of gaugeSources.runnerChildren)
        for (const count of Object.values(read())) children += count;
      result.observe(children);
    });
  meter
    .createObservableGauge("mcpgw_queue_depth", {
      description: "Jobs waiting in the worker's queue (ApproximateNumberOfMessages, read once per sweep)",
    })
    .addCallback((result) => {
      if (gaugeSources.queueDepth !== undefined) result.observe(gaugeSources.queueDepth);
    });
  return {
    probes: meter.createCounter("mcpgw_probe_total", { description: "Worker probes by server and result" }),
    probeDuration: ms("mcpgw_probe_duration", "A worker probe's duration"),
    jobAge: ms("mcpgw_job_age", "How long a job waited in the queue before the worker took it"),
    rateLimited: meter.createCounter("mcpgw_rate_limited_total", {
      description: "Requests the gateway refused on a limit, by limit",
    }),
    fleetWrites: meter.createCounter("mcpgw_runner_fleet_writes_total", {
      description: "A fleet runner's writes to the table: heartbeats, lease claims and releases",
    }),
  };
}

/** Where tool calls are counted: the producer of the process's reader, once there is one. */
let toolCalls: ToolCallMetrics | undefined;

/**
 * The tool-call series (see {@link ToolCallMetrics}) for a reader whose exporter asks for
 * `temporality`: from now on every recorded call goes to it (not to any made before).
 */
export function toolCallProducer(temporality: AggregationTemporality): MetricProducer {
  toolCalls = new ToolCallMetrics(temporality);
  return toolCalls;
}

/** No reader any more: recorded calls go nowhere (a process whose metrics are off). */
export function dropToolCallProducer(): void {
  toolCalls = undefined;
}

/** Counts a finished tool call and its durations (the gateway-added part is the whole less the upstream's). */
export function recordToolCall(server: string, tool: string, outcome: string, times: CallTimes): void {
  if (!toolCalls) return;
  const labels = cap.labels(server, tool);
  toolCalls.record(labels.server, labels.tool ?? OTHER, outcome, [
    times.totalMs,
    times.upstreamMs,
    Math.max(0, times.totalMs - times.upstreamMs),
  ]);
}

/** Counts a worker probe of `server` (its name) and its duration; `result` is `ok` or the failure's reason. */
export function recordProbe(server: string, result: string, durationMs: number): void {
  const { probes, probeDuration } = current();
  const labels: Attributes = cap.labels(server);
  labels.result = result;
  probes.add(1, labels);
  probeDuration.record(durationMs, labels);
}

/** Records how long a job of `type` waited in the queue (from SQS's SentTimestamp to now). */
export function recordJobAge(type: string, ageMs: number): void {
  if (Number.isFinite(ageMs)) current().jobAge.record(Math.max(0, ageMs), { type });
}

/** Counts a request refused on `limit` (the refusal's limit name: `rate`, `concurrency`, `failed_tokens`, …). */
export function recordRateLimited(limit: string): void {
  current().rateLimited.add(1, { limit });
}

/** Counts a fleet runner's write to the table: `heartbeat`, `claim` (a lease taken) or `release`. */
export function recordFleetWrite(write: "heartbeat" | "claim" | "release"): void {
  current().fleetWrites.add(1, { write });
}

/** Reports the session count of `pool` (held weakly: a pool let go stops counting) as `mcpgw_warm_sessions`. */
export function observeWarmSessions(pool: { readonly size: number }): void {
  gaugeSources.pools.add(new WeakRef(pool));
}

/**
 * Reports `read()` (children by state) as `mcpgw_runner_children{state}`, and their sum as
 * `mcpgw_runner_task_children`, until the returned function is called.
 */
export function observeRunnerChildren(read: () => Record<string, number>): () => void {
  gaugeSources.runnerChildren.add(read);
  return () => gaugeSources.runnerChildren.delete(read);
}

/** Sets the queue depth `mcpgw_queue_depth` reports (read once per sweep: a cached value, not a call per scrape). */
export function recordQueueDepth(depth: number): void {
  gaugeSources.queueDepth = depth;
}
