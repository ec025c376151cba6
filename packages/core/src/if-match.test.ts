import { describe, expect, it } from "vitest";
import { AppError } from "./errors";
import { ifMatchAllows, parseIfMatch } from "./if-match";

describe("parseIfMatch", () => {
  it.each([
    ['"3"', [3]],
    ["3", [3]],
    ['W/"3"', [3]],
    ['  "3"  ', [3]],
    ['"1", "2",W/"7"', [1, 2, 7]],
  ])("reads %j as versions %j", (header, versions) => {
    // Prepare / Act
    const condition = parseIfMatch(header);

    // Assess
    expect(condition).toEqual(versions);
  });

  it("reads * as any version", () => {
    expect(parseIfMatch(" * ")).toBe("*");
  });

  it.each([[""], ["  "], ['"'], ['"abc"'], ["*, 1"], ['"1",'], ["-1"], ['"1" "2"'], ['"1.5"'], ["x"]])(
    "refuses %j with 400 request.invalid, never reading it as version 0",
    (header) => {
      // Prepare / Act
      let error: unknown;
      try {
        parseIfMatch(header);
      } catch (caught) {
        error = caught;
      }

      // Assess
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code: "request.invalid", status: 400 });
      expect((error as AppError).detail).toContain('If-Match must be a version like "3"');
    },
  );
});

describe("ifMatchAllows", () => {
  it("matches * against any version and a list when any tag equals the version", () => {
    expect(ifMatchAllows("*", 7)).toBe(true);
    expect(ifMatchAllows([1, 2], 2)).toBe(true);
    expect(ifMatchAllows([1, 2], 3)).toBe(false);
    expect(ifMatchAllows([0], 1)).toBe(false);
  });
});
