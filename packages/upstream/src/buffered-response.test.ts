import { describe, expect, it } from "vitest";
import { BufferedResponse } from "./buffered-response";
import { CALL_HEADER, CallRouter, finishedMessages } from "./call-context";

const bytes = (text: string) => new TextEncoder().encode(text);
const init = (type: string) => ({
  status: 200,
  headers: new Headers({ "content-type": type }),
  url: "http://x/mcp",
});

describe("BufferedResponse", () => {
  it("reads its bytes as text, JSON or a stream, once, like a fetch response", async () => {
    const json = new BufferedResponse(bytes('{"a":1}'), init("application/json"));
    const text = new BufferedResponse(bytes("hé"), init("text/plain"));
    const streamed = new BufferedResponse(bytes("abc"), init("text/plain"));

    expect(json).toBeInstanceOf(Response);
    expect(json.url).toBe("http://x/mcp");
    expect(await json.json()).toEqual({ a: 1 });
    expect(json.bodyUsed).toBe(true);
    await expect(json.text()).rejects.toThrow(TypeError);
    expect(await text.clone().text()).toBe("hé");
    expect(await text.text()).toBe("hé");
    expect(await new Response(streamed.body).text()).toBe("abc");
  });

  it("hands a parsed value to json() without parsing again, and reads as its JSON otherwise", async () => {
    const value = [{ jsonrpc: "2.0", id: 1, result: {} }];

    expect(await new BufferedResponse(bytes("ignored"), init("application/json"), { value }).json()).toBe(
      value,
    );
    expect(await new BufferedResponse(bytes("ignored"), init("application/json"), { value }).text()).toBe(
      JSON.stringify(value),
    );
  });

  it("lets its JSON be looked at without using the body up", async () => {
    const json = new BufferedResponse(bytes('{"a":1}'), init("application/json"));
    const value = [{ jsonrpc: "2.0", id: 1, result: {} }];
    const batch = new BufferedResponse(bytes("ignored"), init("application/json"), { value });

    expect(json.peekJson()).toEqual({ a: 1 });
    expect(json.bodyUsed).toBe(false);
    expect(await json.json()).toEqual({ a: 1 });
    expect(batch.peekJson()).toBe(value);
    expect(await batch.json()).toBe(value);
  });
});

describe("finishedMessages", () => {
  const result = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}';
  const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}';

  it("parses a finished stream's message events, in order, when a response is among them", () => {
    const stream = `id: 1\ndata:\n\nevent: message\ndata: ${progress}\n\r\ndata: ${result}\n\n: comment\n\n`;

    expect(finishedMessages(bytes(stream))).toEqual([JSON.parse(progress), JSON.parse(result)]);
  });

  it("leaves a stream as a stream when it has no response, a retry hint or data that is not JSON", () => {
    expect(finishedMessages(bytes(`data: ${progress}\n\n`))).toBeUndefined();
    expect(finishedMessages(bytes(`retry: 1000\ndata: ${result}\n\n`))).toBeUndefined();
    expect(finishedMessages(bytes(`data: {oops\n\ndata: ${result}\n\n`))).toBeUndefined();
    // An event cut off before its blank line is no event (as the SDK's reader sees it).
    expect(finishedMessages(bytes(`data: ${result}`))).toBeUndefined();
  });

  it("skips events the SDK ignores: other event types and empty data", () => {
    expect(finishedMessages(bytes(`event: ping\ndata: x\n\ndata: ${result}\n\n`))).toEqual([
      JSON.parse(result),
    ]);
  });
});

describe("CallRouter.tap over a finished event stream", () => {
  it("hands the SDK the JSON batch it amounts to, the call's log messages noted on the way", async () => {
    const log = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}';
    const result = '{"jsonrpc":"2.0","id":3,"result":{"content":[]}}';
    const router = new CallRouter();
    const logs: unknown[] = [];
    const sent: Headers[] = [];
    const tapped = router.tap(async (_input, given) => {
      sent.push(new Headers(given?.headers));
      return new BufferedResponse(bytes(`data: ${log}\n\ndata: ${result}\n\n`), init("text/event-stream"));
    });

    const response = await router.run({ onLog: (params) => logs.push(params) }, (headers) =>
      tapped("http://x/mcp", { method: "POST", headers: { accept: "text/event-stream", ...headers } }),
    );

    // The call's header named it to the tap and went no further.
    expect(sent[0]?.has(CALL_HEADER)).toBe(false);
    expect(sent[0]?.get("accept")).toBe("text/event-stream");
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual([JSON.parse(log), JSON.parse(result)]);
    expect(logs).toEqual([{ level: "info", data: "hi" }]);
  });
});
