import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AppError } from "./errors";
import { checkWorktreeRoot, defaultWorktreeBase, isWithinPath, normaliseAbsolutePath } from "./worktree";

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
  it("returns the normalised root strictly under the base ('.' and extra slashes go)", () => {
    expect(checkWorktreeRoot("/srv/wt/t1", "/srv/wt")).toBe("/srv/wt/t1");
    expect(checkWorktreeRoot("/srv/wt/./t2//", "/srv/wt/")).toBe("/srv/wt/t2");
  });

  it.each([
    ["/srv/wt/../etc"],
    ["/srv/wt/a/../t2"],
    ["/srv/wt/a/.."],
    ["/srv/wt-evil/x"],
    ["/srv"],
    ["/srv/wt"],
    ["/srv/wt/"],
    ["/etc/passwd"],
    ["/proc/self"],
    ["/"],
  ])("%s → thread.worktree_forbidden", (root) => {
    expect(codeOf(() => checkWorktreeRoot(root, "/srv/wt"))).toBe("thread.worktree_forbidden");
  });

  it("a relative root is request.invalid", () => {
    expect(codeOf(() => checkWorktreeRoot("srv/wt/t1", "/srv/wt"))).toBe("request.invalid");
  });
});

describe("defaultWorktreeBase", () => {
  it("is mcpgw-worktrees under the data dir, or under the OS temp dir", () => {
    expect(defaultWorktreeBase("/var/lib/runner/")).toBe("/var/lib/runner/mcpgw-worktrees");
    expect(defaultWorktreeBase()).toBe(join(tmpdir(), "mcpgw-worktrees"));
  });
});
