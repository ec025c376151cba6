import { describe, expect, it } from "vitest";
import { isMessageTooLarge, limitResponses, MESSAGE_TOO_LARGE, MessageTooLargeError } from "./limits";

/** A fetch answering with `chunks` as the body (streamed), and counting how much of it was pulled. */
function answering(contentType: string, chunks: string[]) {
  let pulled = 0;
  const encoder = new TextEncoder();
  const fetchImpl = (async () => {
    let index = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks[index++];
        if (chunk === undefined) return controller.close();
        pulled += chunk.length;
        controller.enqueue(encoder.encode(chunk));
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": contentType } });
  }) as typeof fetch;
  return { fetchImpl, pulled: () => pulled };
}

const post = (id: number) => ({
  method: "POST",
  body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: {} }),
});

describe("limitResponses", () => {
  it("passes bodies within the limit through unchanged", async () => {
    const { fetchImpl } = answering("application/json", ['{"a":', '"b"}']);

    const response = await limitResponses(fetchImpl, 100)("http://x/mcp", post(1));

    expect(await response.json()).toEqual({ a: "b" });
  });

  it("errors a JSON body once it passes the limit, and stops reading it", async () => {
    const { fetchImpl, pulled } = answering("application/json", Array(1000).fill("x".repeat(100)));

    const response = await limitResponses(fetchImpl, 1_000)("http://x/mcp", post(1));
    const error = await response.text().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect(isMessageTooLarge(error)).toBe(true);
    expect(pulled()).toBeLessThan(5_000);
  });

  it("on a POST's SSE stream, answers its request with a JSON-RPC error in place of an event past the limit", async () => {
    const { fetchImpl, pulled } = answering("text/event-stream", [
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
      "event: message\ndata: ",
      ...Array(1000).fill("x".repeat(100)),
      "\n\n",
    ]);

    const response = await limitResponses(fetchImpl, 1_000)("http://x/mcp", post(7));
    const text = await response.text();

    const events = text.split(/\n\n/).filter(Boolean);
    expect(events[0]).toContain("notifications/progress");
    expect(events[1]).toMatch(/event: mcpgw-dropped$/);
    const error = JSON.parse(events[2]?.replace(/^event: message\ndata: /, "") ?? "{}");
    expect(error).toMatchObject({ jsonrpc: "2.0", id: 7, error: { data: { code: MESSAGE_TOO_LARGE } } });
    expect(isMessageTooLarge(error.error)).toBe(true);
    expect(pulled()).toBeLessThan(5_000);
  });

  it("on a GET stream, skips an event past the limit and goes on with the next (CRLF lines too)", async () => {
    const { fetchImpl } = answering("text/event-stream", [
      "data: ",
      ...Array(50).fill("y".repeat(100)),
      "\r\n\r\n",
      "data: after\r\n\r\n",
    ]);

    const response = await limitResponses(fetchImpl, 1_000)("http://x/mcp", { method: "GET" });
    const text = await response.text();

    expect(text).toContain("event: mcpgw-dropped");
    expect(text.endsWith("data: after\r\n\r\n")).toBe(true);
    expect(text.length).toBeLessThan(1_200);
  });
});
