import type { AuditStore } from "@mcpgw/aws";
import { type AuditEvent, auditEventId, createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { AuditWriter } from "./audit-writer";

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

/** A store whose appends are recorded, and fail while `failing` is set. */
function recordingStore() {
  const batches: AuditEvent[][] = [];
  const state = { failing: false };
  const audit: AuditStore = {
    async append(events) {
      if (state.failing)
        throw Object.assign(new Error("down"), {
          name: "InternalServerError",
          $metadata: { httpStatusCode: 500 },
        });
      batches.push(events);
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
    expect(writer.status()).toEqual({ state: "ok", dropped: 2, failed: 0 });
  });

  it("a write that keeps failing is logged without values, counted, and degrades it until one succeeds", async () => {
    const { store, batches, state } = recordingStore();
    const { lines, logger } = quiet();
    const writer = new AuditWriter(store, logger, { attempts: 2, flushMs: 60_000 });
    state.failing = true;
    writer.record({ ...event(1), argumentKeys: ["secret-name"] });
    await writer.flush();
    expect(writer.status()).toEqual({ state: "error", dropped: 0, failed: 1 });
    const warning = lines
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === "audit events not written");
    expect(warning).toMatchObject({ events: 1, state: "error" });
    expect(lines.join("\n")).not.toContain("secret-name");

    state.failing = false;
    writer.record(event(2));
    await writer.close();
    expect(writer.status()).toEqual({ state: "ok", dropped: 0, failed: 1 });
    expect(batches.flat().map((e) => e.tool)).toEqual(["t2"]);
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
