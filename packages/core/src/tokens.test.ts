import { describe, expect, it } from "vitest";
import { bearerToken, secretsEqual } from "./tokens";

describe("tokens", () => {
  it("reads the token of a Bearer header, and nothing else", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer  abc ")).toBe("abc");
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it("compares secrets of any lengths", () => {
    expect(secretsEqual("s3cret", "s3cret")).toBe(true);
    expect(secretsEqual("s3cret", "s3cre")).toBe(false);
    expect(secretsEqual("", "x")).toBe(false);
  });
});
