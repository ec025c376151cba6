import { describe, expect, it } from "vitest";
import { valueText, visiblePieces } from "./visible-text";

describe("visiblePieces", () => {
  it("keeps plain text, newlines and tabs in one piece", () => {
    expect(visiblePieces("Reads a file.\n\tNothing else.")).toEqual([
      { text: "Reads a file.\n\tNothing else.", hidden: false },
    ]);
  });

  it("names zero-width, bidi and tag characters by their code points", () => {
    const pieces = visiblePieces("a\u200Bb\u202Ec\u{E0041}");
    expect(pieces).toEqual([
      { text: "a", hidden: false },
      { text: "\u200B", hidden: true, codePoint: "U+200B" },
      { text: "b", hidden: false },
      { text: "\u202E", hidden: true, codePoint: "U+202E" },
      { text: "c", hidden: false },
      { text: "\u{E0041}", hidden: true, codePoint: "U+E0041" },
    ]);
  });

  it("marks control characters and variation selectors but not visible symbols", () => {
    expect(visiblePieces("\u0007✓\uFE0F").map((piece) => piece.hidden)).toEqual([true, false, true]);
  });
});

describe("valueText", () => {
  it("shows strings as they are, objects as indented JSON, and nothing as (none)", () => {
    expect(valueText("text")).toBe("text");
    expect(valueText({ type: "object" })).toBe('{\n  "type": "object"\n}');
    expect(valueText(null)).toBe("(none)");
    expect(valueText(undefined)).toBe("(none)");
    expect(valueText(false)).toBe("false");
  });
});
