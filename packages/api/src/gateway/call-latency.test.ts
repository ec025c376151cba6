import type { Store } from "@mcpgw/aws";
import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, type LatencyPoint, parseServerSpec } from "@mcpgw/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CallLatency } from "./call-latency";

/** A slot's start: 2026-01-01T12:00:00Z, a multiple of the calls ring's 10 s grain. */
const SLOT = Date.UTC(2026, 0, 1, 12);

/** A memory store whose history writes are counted (and refused while `refuse` is set). */
function setup(options: { flushMs?: number } = {}) {
  const store = createMemoryStore();
  const writes: Array<{ serverId: string; point: LatencyPoint }> = [];
  const state = { refuse: false };
  const counting: Pick<Store, "latency" | "outages"> = {
    outages: store.outages,
    latency: {
      ...store.latency,
      record: async (serverId, point) => {
        if (state.refuse) throw new Error("throttled");
        writes.push({ serverId, point });
        await store.latency.record(serverId, point);
      },
    },
  };
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: "debug", sink: (line) => lines.push(JSON.parse(line)) });
  return { store, writes, state, lines, calls: new CallLatency(counting, logger, options) };
}

describe("CallLatency", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(SLOT + 1_000);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a call writes nothing; each server's ended slot becomes one point: median, max, count, errors", async () => {
    // Prepare
    const { store, writes, calls } = setup();
    const server = (name: string) =>
      store.servers.create(parseServerSpec({ name, url: "https://example.com/mcp" }));
    const [a, b] = [(await server("a")).id, (await server("b")).id];

    // Act: calls in one slot, then the timer's flush once it ended
    calls.record(a, 5, true);
    calls.record(a, 1, false);
    calls.record(a, 9.04, true);
    calls.record(b, 2, true);
    const duringSlot = writes.length;
    await calls.flush();
    const afterEarlyFlush = writes.length;
    await vi.advanceTimersByTimeAsync(10_000);

    // Assess
    expect([duringSlot, afterEarlyFlush]).toEqual([0, 0]);
    expect(await store.latency.read(a)).toEqual([
      { at: SLOT, kind: "calls", ms: 5, ok: false, count: 3, errors: 1, maxMs: 9 },
    ]);
    expect(await store.latency.read(b)).toEqual([
      { at: SLOT, kind: "calls", ms: 2, ok: true, count: 1, errors: 0, maxMs: 2 },
    ]);
    expect(writes).toHaveLength(2);
  });

  it("writes each server at most once per slot, however often it flushes", async () => {
    const { writes, calls } = setup({ flushMs: 1_000 });

    for (let second = 1; second < 25; second++) {
      calls.record("a", second, true);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    await vi.advanceTimersByTimeAsync(10_000);

    expect(writes.map(({ point }) => [point.at - SLOT, point.count])).toEqual([
      [0, 9],
      [10_000, 10],
      [20_000, 5],
    ]);
  });

  it("close writes the slot under way; no timer runs while nothing waits to be written", async () => {
    const { writes, calls } = setup();
    const idleTimers = vi.getTimerCount();

    calls.record("a", 3, true);
    const whileWaiting = vi.getTimerCount();
    await calls.close();

    expect([idleTimers, whileWaiting, vi.getTimerCount()]).toEqual([0, 1, 0]);
    expect(writes).toMatchObject([{ serverId: "a", point: { at: SLOT, count: 1 } }]);
  });

  it("a write that fails is logged as a warning and dropped, never thrown", async () => {
    const { writes, state, lines, calls } = setup();
    state.refuse = true;

    calls.record("a", 3, true);
    calls.record("b", 3, true);
    await vi.advanceTimersByTimeAsync(10_000);
    state.refuse = false;
    await vi.advanceTimersByTimeAsync(10_000);

    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "call latency not recorded", servers: 2 }),
    );
    expect(writes).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
