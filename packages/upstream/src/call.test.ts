import { getEventListeners } from "node:events";
import { MAX_RESULT_DEPTH } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { CallFailure, requestUpstream, shapeResult, textParts } from "./call";

describe("requestUpstream", () => {
  it("keeps one listener on the session's long-lived signal, however many calls it carries at once", async () => {
    const broken = new AbortController().signal;

    await Promise.all(
      Array.from({ length: 500 }, (_, i) => requestUpstream(async () => i, { timeoutMs: 1_000, broken })),
    );
    for (let i = 0; i < 500; i++) await requestUpstream(async () => i, { timeoutMs: 1_000, broken });

    expect(getEventListeners(broken, "abort").length).toBeLessThanOrEqual(1);
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

  it("fails an answer nested deeper than MAX_RESULT_DEPTH as the upstream's error (rpc); one at the bound passes", async () => {
    const nested = (levels: number) => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { a: value };
      return value;
    };
    const failure = await requestUpstream(async () => nested(100_000), { timeoutMs: 1_000 }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(CallFailure);
    expect(failure).toMatchObject({
      kind: "rpc",
      message: `its answer nests deeper than ${MAX_RESULT_DEPTH} levels`,
    });
    const atBound = nested(MAX_RESULT_DEPTH);
    expect(await requestUpstream(async () => atBound, { timeoutMs: 1_000 })).toBe(atBound);
  });
});

describe("shapeResult", () => {
  it("passes the result on whole: content, structured content, _meta and the error flag", () => {
    const content = [
      { type: "text", text: "a" },
      { type: "image", data: "x", mimeType: "image/png" },
      { type: "text", text: "b" },
    ];

    const result = shapeResult({ content, structuredContent: { n: 1 }, isError: true, _meta: { m: 2 } });

    expect(result).toEqual({ content, structuredContent: { n: 1 }, isError: true, _meta: { m: 2 } });
    expect(shapeResult({})).toEqual({ content: [], isError: false });
  });
});

describe("textParts", () => {
  it("keeps the text parts in order and nothing else", () => {
    expect(
      textParts([
        { type: "text", text: "a" },
        { type: "image", data: "x", mimeType: "image/png" },
        { type: "text", text: 3 },
        null,
        { type: "text", text: "b" },
      ]),
    ).toEqual(["a", "b"]);
  });
});
