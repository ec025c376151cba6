import { AppError } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import type { Principal } from "../env";
import { shownThreadIds, storedThreadId } from "./thread-access";

const keyA: Principal = { kind: "key", keyId: "0f8c1e2a-aaaa-4bbb-8ccc-000000000001", serverIds: null };
const keyB: Principal = { kind: "key", keyId: "0f8c1e2a-aaaa-4bbb-8ccc-000000000002", serverIds: null };
const admin: Principal = { kind: "admin" };
const user = (sub: string): Principal => ({ kind: "user", sub, serverIds: null });

describe("thread ids scoped to their principal", () => {
  it("two keys naming the same id name two threads; the admin's ids are its own", () => {
    expect(storedThreadId(keyA, "t1")).toBe(`key:${keyA.keyId}:t1`);
    expect(storedThreadId(keyB, "t1")).not.toBe(storedThreadId(keyA, "t1"));
    expect(storedThreadId(admin, "t1")).toBe("t1");
  });

  it("a user's scope is a hash of the sub: subs with ':' never meet", () => {
    const stored = storedThreadId(user("a:b"), "t");
    expect(stored).toMatch(/^user:[0-9a-f]{32}:t$/);
    expect(storedThreadId(user("a"), "b:t")).not.toBe(stored);
  });

  it("a key can reach no other key's thread; the admin names one by its stored id", () => {
    const stored = storedThreadId(keyA, "t1");
    expect(storedThreadId(keyB, stored)).not.toBe(stored);
    expect(storedThreadId(admin, stored)).toBe(stored);
  });

  it("each principal is shown the id it names the thread by", () => {
    const stored = storedThreadId(keyA, "t1");
    expect(shownThreadIds(keyA)(stored)).toBe("t1");
    expect(shownThreadIds(admin)(stored)).toBe(stored);
  });

  it("a key's own ids are at most 128 characters; no principal is 404", () => {
    expect(() => storedThreadId(keyA, "x".repeat(129))).toThrow(AppError);
    expect(storedThreadId(admin, `key:${keyA.keyId}:${"x".repeat(128)}`)).toHaveLength(169);
    expect(() => storedThreadId(undefined, "t1")).toThrow(/No thread/);
  });
});
