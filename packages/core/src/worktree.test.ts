import { describe, expect, it } from "vitest";
import { AppError } from "./errors";
import { checkWorktreeRoot, isWithinPath, normaliseAbsolutePath } from "./worktree";

function codeOf(act: () => unknown): string {
  try {
    act();
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  throw new Error("expected an AppError, nothing was thrown");
}

describe("normaliseAbsolutePath", () => {
  it.each([
    ["/a/./b/../c", "/a/c"],
    ["/a/b/../c", "/a/c"],
    ["/a/c/", "/a/c"],
    ["//a//c///", "/a/c"],
    ["/../..", "/"],
    ["/", "/"],
  ])("%s → %s", (input, expected) => {
    expect(normaliseAbsolutePath(input)).toBe(expected);
  });

  it.each([["relative"], ["./a"], ["../a"], [""], ["/a\0/b"]])("refuses %j as request.invalid", (input) => {
    expect(codeOf(() => normaliseAbsolutePath(input))).toBe("request.invalid");
  });
});

describe("isWithinPath", () => {
  it.each([
    ["/base", "/base", true],
    ["/base", "/base/t1", true],
    ["/base", "/base/t1/deeper", true],
    ["/", "/anything", true],
    ["/base", "/base-evil", false],
    ["/base", "/base-evil/x", false],
    ["/base", "/", false],
    ["/base/t1", "/base", false],
  ])("%s contains %s: %s", (base, path, within) => {
    expect(isWithinPath(base, path)).toBe(within);
  });
});

describe("checkWorktreeRoot", () => {
  it("returns the normalised root; without a base any absolute root is fine", () => {
    expect(checkWorktreeRoot("/etc/./x/..", undefined)).toBe("/etc");
  });

  it("with a base: the base or under it after normalising, else thread.worktree_forbidden", () => {
    expect(checkWorktreeRoot("/srv/wt/t1", "/srv/wt")).toBe("/srv/wt/t1");
    expect(checkWorktreeRoot("/srv/wt/", "/srv/wt")).toBe("/srv/wt");
    expect(checkWorktreeRoot("/srv/wt/a/../t2/", "/srv/wt/")).toBe("/srv/wt/t2");
    for (const outside of ["/srv/wt/../etc", "/srv/wt-evil/x", "/srv", "/etc/passwd"]) {
      expect(
        codeOf(() => checkWorktreeRoot(outside, "/srv/wt")),
        outside,
      ).toBe("thread.worktree_forbidden");
    }
    expect(codeOf(() => checkWorktreeRoot("srv/wt/t1", "/srv/wt"))).toBe("request.invalid");
  });
});
