import { describe, expect, it } from "vitest";
import { toolResultResponse, WHOLE_BODY_CHARS } from "./result-body";

describe("toolResultResponse", () => {
  it("streams the result with its text parts joined, valid JSON whatever the text holds", async () => {
    const content = [
      { type: "text", text: 'line "one"\n\\ ✓' },
      { type: "image", data: "aGk=", mimeType: "image/png" },
      { type: "text", text: "two" },
    ];

    const response = toolResultResponse({
      content,
      structuredContent: { n: 1 },
      isError: true,
      _meta: { "x/y": 2 },
    });

    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      content,
      structuredContent: { n: 1 },
      _meta: { "x/y": 2 },
      text: 'line "one"\n\\ ✓\ntwo',
      isError: true,
    });
  });

  it("writes an empty result as empty content and empty text", async () => {
    expect(await toolResultResponse({ content: [], isError: false }).json()).toEqual({
      content: [],
      text: "",
      isError: false,
    });
  });
});

describe("toolResultResponse sizes", () => {
  it("sends a small result as one whole body, and a large one as a stream with the same JSON", async () => {
    const small = toolResultResponse({ content: [{ type: "text", text: "hi" }], isError: false });
    const text = "x".repeat(WHOLE_BODY_CHARS);
    const large = toolResultResponse({
      content: [
        { type: "text", text },
        { type: "text", text },
      ],
      isError: false,
    });

    expect(await new Response(small.body).text()).toBe(
      '{"content":[{"type":"text","text":"hi"}],"text":"hi","isError":false}',
    );
    const reader = (large.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    expect(chunks.length).toBeGreaterThan(1);
    expect(JSON.parse(Buffer.concat(chunks).toString("utf8"))).toEqual({
      content: [
        { type: "text", text },
        { type: "text", text },
      ],
      text: `${text}\n${text}`,
      isError: false,
    });
  });
});
