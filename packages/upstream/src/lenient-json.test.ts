import { describe, expect, it } from "vitest";
import { BufferedResponse } from "./buffered-response";
import { lenientJson } from "./lenient-json";

const ndjson =
  '{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n{"jsonrpc":"2.0","id":1,"result":{}}\n';
const batch = [
  { jsonrpc: "2.0", method: "notifications/message", params: {} },
  { jsonrpc: "2.0", id: 1, result: {} },
];

/** A fetch that answers `response` (made afresh per call). */
const answering = (response: () => Response) => lenientJson(async () => response());

describe("lenientJson", () => {
  it("reads a streamed NDJSON answer under application/json as the batch of its lines", async () => {
    const fetch = answering(() => new Response(ndjson, { headers: { "content-type": "application/json" } }));
    expect(await (await fetch("http://upstream.test/mcp")).json()).toEqual(batch);
  });

  it("reads a buffered one the same way", async () => {
    const bytes = new TextEncoder().encode(ndjson);
    const headers = new Headers({ "content-type": "application/json; charset=utf-8" });
    const fetch = answering(() => new BufferedResponse(bytes, { status: 200, headers }));
    expect(await (await fetch("http://upstream.test/mcp")).json()).toEqual(batch);
  });

  it("leaves other content types alone", async () => {
    const fetch = answering(() => new Response(ndjson, { headers: { "content-type": "text/plain" } }));
    await expect((await fetch("http://upstream.test/mcp")).json()).rejects.toThrow(SyntaxError);
  });
});
