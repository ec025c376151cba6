import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { CallFailure, requestUpstream, shapeResult } from "./call";

describe("requestUpstream", () => {
  it("leaves no listeners behind on the session's long-lived signal, however many calls it carries", async () => {
    const broken = new AbortController().signal;

    for (let i = 0; i < 500; i++) await requestUpstream(async () => i, { timeoutMs: 1_000, broken });

    expect(getEventListeners(broken, "abort")).toHaveLength(0);
  });

  it("aborts the request when the caller leaves, and reports it as cancelled", async () => {
    const caller = new AbortController();
    const pending = requestUpstream(
      ({ signal }) =>
        new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted")))),
      { timeoutMs: 1_000, signal: caller.signal, broken: new AbortController().signal },
    );

    caller.abort();

    await expect(pending).rejects.toMatchObject({ name: "CallFailure", kind: "cancelled" });
  });

  it("reports a session that broke under the call as unreachable", async () => {
    const session = new AbortController();
    session.abort(new Error("SSE stream disconnected"));

    const failure = await requestUpstream(
      async ({ signal }) => {
        if (signal?.aborted) throw signal.reason;
        return 1;
      },
      { timeoutMs: 1_000, broken: session.signal },
    ).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(CallFailure);
    expect(failure).toMatchObject({ kind: "unreachable" });
    expect((failure as Error).message).toContain("SSE stream disconnected");
  });
});

describe("shapeResult", () => {
  it("joins the text parts and keeps structured content and the error flag", () => {
    const result = shapeResult({
      content: [
        { type: "text", text: "a" },
        { type: "image", data: "x", mimeType: "image/png" },
        { type: "text", text: "b" },
      ],
      structuredContent: { n: 1 },
      isError: true,
    });

    expect(result).toEqual({
      content: expect.any(Array),
      structuredContent: { n: 1 },
      text: "a\nb",
      isError: true,
    });
  });
});
