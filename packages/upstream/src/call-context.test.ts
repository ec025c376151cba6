import { describe, expect, it } from "vitest";
import { BufferedResponse } from "./buffered-response";
import { type CallContext, CallRouter, declaresCapabilityFor, progressOf } from "./call-context";

describe("declaresCapabilityFor", () => {
  const roots = { method: "roots/list" } as const;
  const sampling = { method: "sampling/createMessage" } as const;
  const form = { method: "elicitation/create", params: { message: "?" } } as const;
  const url = { method: "elicitation/create", params: { mode: "url", url: "https://x" } } as const;

  it("asks only for what the caller declared", () => {
    expect(declaresCapabilityFor(undefined, roots)).toBe(false);
    expect(declaresCapabilityFor({}, roots)).toBe(false);
    expect(declaresCapabilityFor({ roots: {} }, roots)).toBe(true);
    expect(declaresCapabilityFor({ roots: {} }, sampling)).toBe(false);
    expect(declaresCapabilityFor({ sampling: {} }, sampling)).toBe(true);
  });

  it("an elicitation needs its mode declared; a bare elicitation capability is form", () => {
    expect(declaresCapabilityFor({ elicitation: {} }, form)).toBe(true);
    expect(declaresCapabilityFor({ elicitation: {} }, url)).toBe(false);
    expect(declaresCapabilityFor({ elicitation: { url: {} } }, form)).toBe(false);
    expect(declaresCapabilityFor({ elicitation: { url: {} } }, url)).toBe(true);
    expect(declaresCapabilityFor({ elicitation: { form: {}, url: {} } }, form)).toBe(true);
  });
});

/** An event stream of these JSON-RPC messages, as one body. */
function eventStream(messages: unknown[]): Uint8Array {
  return Buffer.from(
    messages.map((message) => `event: message\ndata: ${JSON.stringify(message)}\n\n`).join(""),
  );
}

const log = (data: string) => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { level: "info", data },
});
const progress = (value: number) => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: 7, progress: value, total: 2 },
});
const BURST = [
  log("a"),
  progress(1),
  log("b"),
  progress(2),
  { jsonrpc: "2.0", id: 7, result: { content: [] } },
];
const EVENT_STREAM = { "content-type": "text/event-stream" };

/** A context that records what it is told. */
function recording(): { context: CallContext; heard: string[] } {
  const heard: string[] = [];
  const context: CallContext = {
    onLog: (params) => heard.push(`log ${String(params.data)}`),
    onProgress: (report) => heard.push(`progress ${report.progress}/${report.total}`),
  };
  return { context, heard };
}

describe("CallRouter: what a call's stream carries", () => {
  for (const [label, answer] of [
    [
      "arrived whole",
      () => new BufferedResponse(eventStream(BURST), { status: 200, headers: new Headers(EVENT_STREAM) }),
    ],
    ["streamed", () => new Response(eventStream(BURST), { headers: EVENT_STREAM })],
  ] as const) {
    it(`${label}: logs and progress are told to the call in the order sent; the SDK's copies are not told again`, async () => {
      const router = new CallRouter();
      const { context, heard } = recording();
      const fetchImpl = router.tap(async () => answer());

      await router.run(context, async (headers) => {
        const response = await fetchImpl("http://upstream.test/mcp", { method: "POST", headers, body: "{}" });
        await response.text();
        const relay = router.relayProgress(context);
        // The SDK hears the stream's progress too, and may hear more elsewhere (a GET stream).
        relay({ progress: 1, total: 2 });
        relay({ progress: 2, total: 2 });
        relay({ progress: 3, total: 3 });
      });

      expect(heard).toEqual(["log a", "progress 1/2", "log b", "progress 2/2", "progress 3/3"]);
    });
  }

  it("a GET's stream that arrived whole stays an event stream (a resumed stream: the SDK reads a GET only as one)", async () => {
    const router = new CallRouter();
    const whole = () =>
      new BufferedResponse(eventStream(BURST), { status: 200, headers: new Headers(EVENT_STREAM) });
    const fetchImpl = router.tap(async () => whole());

    const resumed = await fetchImpl("http://upstream.test/mcp", {
      method: "GET",
      headers: { "last-event-id": "s.1" },
    });
    const posted = await fetchImpl("http://upstream.test/mcp", { method: "POST", body: "{}" });

    expect(resumed.headers.get("content-type")).toBe("text/event-stream");
    expect(await resumed.text()).toBe(eventStream(BURST).toString());
    expect(posted.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("a stream that outlives its call tells it nothing more", async () => {
    const router = new CallRouter();
    const { context, heard } = recording();
    let late: Response | undefined;
    const fetchImpl = router.tap(async () => new Response(eventStream(BURST), { headers: EVENT_STREAM }));

    await router.run(context, async (headers) => {
      late = await fetchImpl("http://upstream.test/mcp", { method: "POST", headers, body: "{}" });
    });
    await late?.text();

    expect(heard).toEqual([]);
  });
});

describe("progressOf", () => {
  it("reads a progress notification's report, its token aside", () => {
    expect(progressOf({ progressToken: 1, progress: 2, total: 3, message: "m" })).toEqual({
      progress: 2,
      total: 3,
      message: "m",
    });
    expect(progressOf({ progressToken: 1, progress: 0.5 })).toEqual({ progress: 0.5 });
  });

  it("refuses what is no report", () => {
    expect(progressOf({ progress: "2" })).toBeUndefined();
    expect(progressOf({ progress: Number.NaN })).toBeUndefined();
    expect(progressOf({ progress: 1, total: "3" })).toBeUndefined();
    expect(progressOf({ progress: 1, message: 5 })).toBeUndefined();
    expect(progressOf({})).toBeUndefined();
  });
});
