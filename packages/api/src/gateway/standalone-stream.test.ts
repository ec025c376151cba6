import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { opensStandaloneStream, SDK_STANDALONE_STREAM_ID } from "./standalone-stream";

const get = (lastEventId?: string) =>
  new Request("http://127.0.0.1/mcp/logs", {
    method: "GET",
    headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId },
  });

describe("opensStandaloneStream", () => {
  it("names the SDK's own id of a session's standalone stream", () => {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    expect((transport as unknown as { _standaloneSseStreamId: string })._standaloneSseStreamId).toBe(
      SDK_STANDALONE_STREAM_ID,
    );
  });

  it("is a GET without Last-Event-ID, with an empty one, or resuming the standalone stream's events", () => {
    expect(opensStandaloneStream(get())).toBe(true);
    expect(opensStandaloneStream(get(""))).toBe(true);
    expect(opensStandaloneStream(get(`${SDK_STANDALONE_STREAM_ID}.7`))).toBe(true);
  });

  it("is not a GET resuming a call's stream, nor a POST", () => {
    expect(opensStandaloneStream(get("call-stream-3.2"))).toBe(false);
    expect(opensStandaloneStream(new Request("http://127.0.0.1/mcp/logs", { method: "POST" }))).toBe(false);
  });
});
