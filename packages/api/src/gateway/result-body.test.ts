import { describe, expect, it } from "vitest";
import { toolResultResponse } from "./result-body";

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
