import { describe, expect, it } from "vitest";
import { plainToolResult } from "./direct-call";

describe("plainToolResult", () => {
  it("takes a result of text parts, rebuilt in the order the SDK's validation returns", () => {
    const result = { isError: true, structuredContent: { n: 1 }, content: [{ text: "a", type: "text" }] };
    expect(JSON.stringify(plainToolResult(result))).toBe(
      JSON.stringify({ content: [{ type: "text", text: "a" }], structuredContent: { n: 1 }, isError: true }),
    );
    expect(plainToolResult({ content: [] })).toEqual({ content: [] });
  });

  it.each([
    ["not an object", "text"],
    ["an array", []],
    ["no content", { isError: false }],
    ["content not a list", { content: "a" }],
    ["an image part", { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] }],
    ["a text part without text", { content: [{ type: "text" }] }],
    [
      "a text part with annotations",
      { content: [{ type: "text", text: "a", annotations: { priority: 1 } }] },
    ],
    ["a part that is not an object", { content: ["a"] }],
    ["isError not a boolean", { content: [], isError: "yes" }],
    ["structuredContent not an object", { content: [], structuredContent: [1] }],
    ["a _meta", { content: [], _meta: { a: 1 } }],
    ["anything else", { content: [], resultType: "complete" }],
  ])("leaves %s to the SDK", (_, result) => {
    expect(plainToolResult(result)).toBeUndefined();
  });
});
