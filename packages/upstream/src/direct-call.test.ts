import { describe, expect, it } from "vitest";
import { directIdOf, plainToolResult } from "./direct-call";

describe("directIdOf", () => {
  const post = (message: unknown) => ({ method: "POST", body: JSON.stringify(message) });
  const id = 2 ** 40 + 7;

  it("reads the id of a tools/call as the SDK writes it (method first, id last)", () => {
    expect(directIdOf(post({ method: "tools/call", params: { name: "a" }, jsonrpc: "2.0", id }))).toBe(id);
  });

  it.each([
    ["an id of the SDK's own numbering", post({ method: "tools/call", params: {}, jsonrpc: "2.0", id: 7 })],
    // An answer to an upstream's question, under the upstream's id (say a timestamp): not a direct call.
    ["an answer to the upstream", post({ result: { action: "decline" }, jsonrpc: "2.0", id })],
    ["another method", post({ method: "tools/list", params: {}, jsonrpc: "2.0", id })],
    [
      "a notification",
      post({ method: "notifications/cancelled", params: { requestId: id }, jsonrpc: "2.0" }),
    ],
    ["a GET", { method: "GET" }],
  ])("reads none from %s", (_, init) => {
    expect(directIdOf(init)).toBeUndefined();
  });
});

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
