import { describe, expect, it } from "vitest";
import { AppError } from "./errors";
import { assertJsonDepth, jsonDepth, MAX_JSON_DEPTH } from "./json-depth";

/** `[[[…]]]` nested `levels` deep. */
function nested(levels: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { k: value };
  return value;
}

describe("jsonDepth", () => {
  it.each([
    ["a scalar", "x", 0],
    ["null", null, 0],
    ["an empty object", {}, 1],
    ["an empty array", [], 1],
    ["an object of scalars", { a: 1, b: "two" }, 1],
    ["mixed siblings, the deepest counts", { a: [1], b: { c: { d: [] } } }, 4],
  ])("%s → %i", (_, value, depth) => {
    expect(jsonDepth(value)).toBe(depth);
  });

  it("stops counting just past the limit, whatever the real depth (no recursion)", () => {
    const hostile = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);

    expect(jsonDepth(hostile, 64)).toBe(65);
  });
});

describe("assertJsonDepth", () => {
  it("accepts exactly the limit and refuses one level more with request.too_deep", () => {
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH), "arguments")).not.toThrow();

    const error = (() => {
      try {
        assertJsonDepth(nested(MAX_JSON_DEPTH + 1), "arguments");
      } catch (caught) {
        return caught;
      }
    })();

    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "request.too_deep", status: 400 });
  });
});
