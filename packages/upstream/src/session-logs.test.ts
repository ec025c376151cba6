import { describe, expect, it } from "vitest";
import { logParams, tapSessionLogs } from "./session-logs";

const line = (data: string) => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { level: "info", data },
});

/** An SSE body of these messages, each event with the id given (if any). */
function sse(events: Array<{ id?: string; message: unknown }>): string {
  return events
    .map(
      ({ id, message }) => `${id ? `id: ${id}\n` : ""}event: message\ndata: ${JSON.stringify(message)}\n\n`,
    )
    .join("");
}

/** A tapped fetch answering every request with `body` as an event stream, and the lines it told. */
function tapped(body: string) {
  const told: unknown[] = [];
  const fetchImpl = (async () =>
    new Response(body, { headers: { "content-type": "text/event-stream" } })) as typeof fetch;
  return { told, fetch: tapSessionLogs(fetchImpl, (params) => told.push(params.data)) };
}

describe("tapSessionLogs", () => {
  const standalone = sse([
    { id: "s1", message: line("between calls") },
    { message: { jsonrpc: "2.0", method: "notifications/tools/list_changed" } },
  ]);

  it("tells the log lines of a standalone GET stream, which passes through unchanged", async () => {
    const { told, fetch } = tapped(standalone);
    const response = await fetch("http://upstream/mcp", { method: "GET" });
    expect(await response.text()).toBe(standalone);
    expect(told).toEqual(["between calls"]);
  });

  it("tells nothing of a POST's stream: its lines are its call's", async () => {
    const { told, fetch } = tapped(standalone);
    await (await fetch("http://upstream/mcp", { method: "POST", body: "{}" })).text();
    expect(told).toEqual([]);
  });

  it("a GET resuming a call's stream tells nothing; one resuming the standalone stream does", async () => {
    const { told, fetch } = tapped(standalone);
    await (await fetch("http://upstream/mcp", { method: "GET" })).text();
    const resumedCall = await fetch("http://upstream/mcp", {
      method: "GET",
      headers: { "last-event-id": "call-stream-7" },
    });
    await resumedCall.text();
    expect(told).toEqual(["between calls"]);
    const resumed = await fetch("http://upstream/mcp", {
      method: "GET",
      headers: new Headers({ "Last-Event-ID": "s1" }),
    });
    await resumed.text();
    expect(told).toEqual(["between calls", "between calls"]);
  });

  it("a listener that throws does not break the stream", async () => {
    const fetchImpl = (async () =>
      new Response(standalone, { headers: { "content-type": "text/event-stream" } })) as typeof fetch;
    const fetch = tapSessionLogs(fetchImpl, () => {
      throw new Error("listener broke");
    });
    expect(await (await fetch("http://upstream/mcp", { method: "GET" })).text()).toBe(standalone);
  });
});

describe("logParams", () => {
  it("reads a log notification's params, and nothing else", () => {
    expect(logParams(undefined, JSON.stringify(line("x")))).toEqual({ level: "info", data: "x" });
    expect(logParams("message", JSON.stringify(line("x")))).toEqual({ level: "info", data: "x" });
    expect(logParams("mcpgw-dropped", JSON.stringify(line("x")))).toBeUndefined();
    expect(logParams(undefined, JSON.stringify({ ...line("x"), id: 3 }))).toBeUndefined();
    expect(logParams(undefined, JSON.stringify({ ...line("x"), params: ["x"] }))).toBeUndefined();
    expect(logParams(undefined, '{"method":"notifications/message"')).toBeUndefined();
    expect(logParams(undefined, JSON.stringify({ method: "notifications/progress" }))).toBeUndefined();
  });
});
