import { describe, expect, it } from "vitest";
import { settleEventStream } from "./settle-stream";

const encoder = new TextEncoder();
const sse = { "content-type": "text/event-stream" };

/** An event stream whose events come at the given delays (ms; 0: at once), then closes. */
function eventStream(events: Array<{ after: number; text: string }>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const { after, text } of events) {
        if (after > 0) await new Promise((resolve) => setTimeout(resolve, after));
        controller.enqueue(encoder.encode(text));
      }
      controller.close();
    },
  });
}

/** How many reads the body takes, and what it says. */
async function readAll(response: Response): Promise<{ reads: number; text: string }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let reads = 0;
  let text = "";
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    reads++;
    text += new TextDecoder().decode(read.value);
  }
  return { reads, text };
}

describe("settleEventStream", () => {
  it("sends a stream that ends with its first event as one body, headers and status kept", async () => {
    const response = new Response(eventStream([{ after: 5, text: "data: result\n\n" }]), {
      status: 200,
      headers: { ...sse, "mcp-session-id": "s" },
    });

    const settled = await settleEventStream(response);

    expect(settled.headers.get("mcp-session-id")).toBe("s");
    expect(await readAll(settled)).toEqual({ reads: 1, text: "data: result\n\n" });
  });

  it("holds a resumable stream's priming event (an id, no message) for the message after it", async () => {
    const priming = "id: s.1\nretry: 2000\ndata: \n\n";
    const response = new Response(
      eventStream([
        { after: 0, text: priming },
        { after: 30, text: 'id: s.2\ndata: {"result":{}}\n\n' },
      ]),
      { status: 200, headers: sse },
    );

    const settled = await settleEventStream(response);

    expect(await readAll(settled)).toEqual({
      reads: 1,
      text: `${priming}id: s.2\ndata: {"result":{}}\n\n`,
    });
  });

  it("streams one that goes on after its first event (progress first, the result later)", async () => {
    const response = new Response(
      eventStream([
        { after: 0, text: "data: progress\n\n" },
        { after: 30, text: "data: result\n\n" },
      ]),
      { headers: sse },
    );

    const started = performance.now();
    const settled = await settleEventStream(response);

    expect(performance.now() - started).toBeLessThan(25);
    expect(await readAll(settled)).toEqual({ reads: 2, text: "data: progress\n\ndata: result\n\n" });
  });

  it("waits for the first bytes no longer than its bound, then streams", async () => {
    const response = new Response(eventStream([{ after: 80, text: "data: late\n\n" }]), { headers: sse });

    const started = performance.now();
    const settled = await settleEventStream(response, 20);

    expect(performance.now() - started).toBeLessThan(70);
    expect((await readAll(settled)).text).toBe("data: late\n\n");
  });

  it("leaves other answers alone", async () => {
    const json = new Response('{"a":1}', { headers: { "content-type": "application/json" } });

    expect(await settleEventStream(json)).toBe(json);
  });
});
