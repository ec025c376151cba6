import type { AuditEntry, AuditStore } from "@mcpgw/aws";
import { type AuditEvent, auditEventId, createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { AUDIT_WRITE_EVENTS, AuditWriter } from "./audit-writer";

const event = (n: number): AuditEvent => ({
  id: auditEventId(Date.now() + n),
  at: new Date().toISOString(),
  type: "call",
  principal: { kind: "admin" },
  plane: "rest",
  tool: `t${n}`,
  outcome: "ok",
  durationMs: 1,
});

/** The events a store was handed, read back from their entries. */
const eventsOf = (entries: AuditEntry[]) => entries.map((entry) => JSON.parse(entry.json) as AuditEvent);

/** A store whose appends are recorded, and fail while `failing` is set. */
function recordingStore() {
  const batches: AuditEvent[][] = [];
  const state = { failing: false };
  const audit: AuditStore = {
    async append(entries) {
      if (state.failing)
        throw Object.assign(new Error("down"), {
          name: "InternalServerError",
          $metadata: { httpStatusCode: 500 },
        });
      batches.push(eventsOf(entries));
    },
    query: async () => ({ events: [], cursor: null }),
  };
  return { store: { audit }, batches, state };
}

const quiet = () => {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: "debug", sink: (line) => lines.push(line) }) };
};

describe("the audit writer", () => {
  it("records without writing, then writes in batches of batchSize on flush", async () => {
    const { store, batches } = recordingStore();
    const writer = new AuditWriter(store, quiet().logger, { batchSize: 2, flushMs: 60_000 });
    for (let n = 0; n < 5; n++) writer.record(event(n));
    expect(batches).toEqual([]);
    await writer.close();
    expect(batches.map((batch) => batch.map((e) => e.tool))).toEqual([["t0", "t1"], ["t2", "t3"], ["t4"]]);
  });

  it("by default hands the store a whole request of full packs at once, not one pack a write", async () => {
    const { store, batches } = recordingStore();
    const writer = new AuditWriter(store, quiet().logger, { flushMs: 60_000 });
    for (let n = 0; n < AUDIT_WRITE_EVENTS + 1; n++) writer.record(event(n));
    await writer.close();
    expect(AUDIT_WRITE_EVENTS).toBe(2_500);
    expect(batches.map((batch) => batch.length)).toEqual([AUDIT_WRITE_EVENTS, 1]);
  });

  it("its timer writes what is buffered, off the caller's path", async () => {
    const { store, batches } = recordingStore();
    const writer = new AuditWriter(store, quiet().logger, { flushMs: 10 });
    writer.record(event(1));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(batches.flat().map((e) => e.tool)).toEqual(["t1"]);
    await writer.close();
  });

  it("past maxBuffered it drops the oldest events and counts them", async () => {
    const { store, batches } = recordingStore();
    const { lines, logger } = quiet();
    const writer = new AuditWriter(store, logger, { maxBuffered: 3, flushMs: 60_000 });
    for (let n = 0; n < 5; n++) writer.record(event(n));
    await writer.close();
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ msg: "audit events dropped: the buffer was full", events: 2 }),
    );
    expect(batches.flat().map((e) => e.tool)).toEqual(["t2", "t3", "t4"]);
    expect(writer.status()).toEqual({ state: "ok", dropped: 2, failed: 0, shortened: 0 });
  });

  it("a write that keeps failing is logged without values, counted, and degrades it until one succeeds", async () => {
    const { store, batches, state } = recordingStore();
    const { lines, logger } = quiet();
    const writer = new AuditWriter(store, logger, { attempts: 2, flushMs: 60_000 });
    state.failing = true;
    writer.record({ ...event(1), argumentKeys: ["secret-name"] });
    await writer.flush();
    expect(writer.status()).toEqual({ state: "error", dropped: 0, failed: 1, shortened: 0 });
    const warning = lines
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === "audit events not written");
    expect(warning).toMatchObject({ events: 1, state: "error" });
    expect(lines.join("\n")).not.toContain("secret-name");

    state.failing = false;
    writer.record(event(2));
    await writer.close();
    expect(writer.status()).toEqual({ state: "ok", dropped: 0, failed: 1, shortened: 0 });
    expect(batches.flat().map((e) => e.tool)).toEqual(["t2"]);
  });

  it("a batch refused as invalid is written again in halves: only the event at fault is lost", async () => {
    const written: AuditEvent[][] = [];
    let requests = 0;
    const audit: AuditStore = {
      async append(entries) {
        const events = eventsOf(entries);
        requests++;
        // As DynamoDB does: one item it refuses fails the whole request.
        if (events.some((e) => e.tool === "bad"))
          throw Object.assign(new Error("Item size has exceeded the maximum allowed size"), {
            name: "ValidationException",
            $metadata: { httpStatusCode: 400 },
          });
        written.push(events);
      },
      query: async () => ({ events: [], cursor: null }),
    };
    const writer = new AuditWriter({ audit }, quiet().logger, { flushMs: 60_000, attempts: 3 });
    for (let n = 0; n < 64; n++) writer.record(n === 37 ? { ...event(n), tool: "bad" } : event(n));
    await writer.close();
    expect(written.flat().map((e) => e.tool)).toEqual(
      Array.from({ length: 64 }, (_, n) => `t${n}`).filter((tool) => tool !== "t37"),
    );
    expect(writer.status()).toMatchObject({ state: "error", failed: 1 });
    // Down the halves to the one event: two writes a level (6 levels for 64), not one per event.
    expect(requests).toBe(1 + 2 * 6);
  });

  it("an event too large to store whole is written shortened, and counted", async () => {
    const { store, batches } = recordingStore();
    const { lines, logger } = quiet();
    const writer = new AuditWriter(store, logger, { flushMs: 60_000 });
    writer.record({ ...event(1), tool: "x".repeat(1024 * 1024) });
    writer.record(event(2));
    await writer.close();
    expect(batches.flat().map((e) => e.tool)).toEqual(["x".repeat(256), "t2"]);
    expect(writer.status()).toMatchObject({ state: "ok", shortened: 1 });
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ msg: "audit events shortened: too large to store whole", events: 1 }),
    );
  });

  it("holds what an event was when recorded: a later change to the object is not written", async () => {
    const { store, batches } = recordingStore();
    const writer = new AuditWriter(store, quiet().logger, { flushMs: 60_000 });
    const recorded = { ...event(1), argumentKeys: ["a"] };
    writer.record(recorded);
    recorded.tool = "changed";
    recorded.argumentKeys.push("b");
    await writer.close();
    expect(batches.flat()).toEqual([expect.objectContaining({ tool: "t1", argumentKeys: ["a"] })]);
  });

  it("a flush within a deadline returns by it; the batches not begun stay buffered for the next", async () => {
    const written: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const audit: AuditStore = {
      async append(entries) {
        if (written.length === 0) await held;
        written.push(...eventsOf(entries).map((e) => e.tool ?? ""));
      },
      query: async () => ({ events: [], cursor: null }),
    };
    const writer = new AuditWriter({ audit }, quiet().logger, { flushMs: 60_000, batchSize: 1 });
    for (const n of [1, 2, 3]) writer.record(event(n));
    const started = performance.now();
    await writer.flushWithin(50);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(written).toEqual([]);
    release();
    // The batch under way ends; the two not begun are written by the next flush, not before.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(written).toEqual(["t1"]);
    await writer.close();
    expect(written).toEqual(["t1", "t2", "t3"]);
  });

  it('the log sink writes one {"audit": …} JSON line per event', async () => {
    const { store, batches } = recordingStore();
    const written: string[] = [];
    const writer = new AuditWriter(store, quiet().logger, {
      sink: "log",
      writeLine: (text) => written.push(text),
    });
    writer.record(event(1));
    writer.record(event(2));
    await writer.close();
    expect(batches).toEqual([]);
    const lines = written.join("").split("\n").filter(Boolean);
    expect(lines.map((line) => JSON.parse(line).audit.tool)).toEqual(["t1", "t2"]);
  });
});
