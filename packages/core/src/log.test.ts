import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, flushingLogs, flushLogs, LOG_FLUSH_MS } from "./log";

afterEach(() => {
  flushLogs();
  vi.restoreAllMocks();
});

/** What the default sink wrote to stderr, write by write. */
function stderrWrites(): string[] {
  const writes: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  });
  return writes;
}

describe("the default log sink", () => {
  it("writes the lines of a burst together, shortly after, one JSON object per line", async () => {
    const writes = stderrWrites();
    const logger = createLogger().child({ requestId: "r-1" });

    logger.info("tool call started", { server: "s" });
    logger.info("tool call finished", { outcome: "ok" });
    logger.debug("below the level");
    expect(writes).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_MS * 3));

    expect(writes).toHaveLength(1);
    const lines = (writes[0] ?? "")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toMatchObject([
      { level: "info", msg: "tool call started", requestId: "r-1", server: "s" },
      { level: "info", msg: "tool call finished", requestId: "r-1", outcome: "ok" },
    ]);
  });

  it("writes what is buffered before a wrapped handler's answer returns", async () => {
    const writes = stderrWrites();
    const logger = createLogger();
    const handler = flushingLogs(async (name: string) => {
      logger.info("invoked", { name });
      return name.length;
    });

    expect(await handler("job")).toBe(3);

    expect(writes.join("")).toContain('"msg":"invoked"');
  });

  it("runs the extra flush (the metrics) before the invocation's answer goes back, even when it throws", async () => {
    stderrWrites();
    const order: string[] = [];
    const flushAlso = async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push("flushed");
    };
    const ok = flushingLogs(async () => "answer", flushAlso);
    const failing = flushingLogs(async () => {
      throw new Error("boom");
    }, flushAlso);

    order.push(await ok());
    await failing().catch((error: Error) => order.push(error.message));

    expect(order).toEqual(["flushed", "answer", "flushed", "boom"]);
  });
});

describe("log lines", () => {
  it("carry the base fields and the line's own, a line's own replacing a base one of the same name", () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line) }).child({ requestId: "r", server: "a" });

    logger.info("plain");
    logger.warn("own fields", { count: 2, quote: 'a "b"' });
    logger.error("replacing", { server: "b", msg: "not the message" });

    expect(lines.map((line) => JSON.parse(line))).toEqual([
      { time: expect.any(String), level: "info", msg: "plain", requestId: "r", server: "a" },
      {
        time: expect.any(String),
        level: "warn",
        msg: "own fields",
        requestId: "r",
        server: "a",
        count: 2,
        quote: 'a "b"',
      },
      { time: expect.any(String), level: "error", msg: "not the message", requestId: "r", server: "b" },
    ]);
    expect(lines.every((line) => !/"server":"a".*"server"/.test(line))).toBe(true);
  });
});
