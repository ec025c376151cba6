import { describe, expect, it } from "vitest";
import { sessionKey } from "./server-session";

describe("sessionKey", () => {
  it("keys a dual-era server's 2025 session apart from its 2026 one, and a caller's own apart from another's", () => {
    const keys = [
      sessionKey("s1", {}),
      sessionKey("s1", { era: "legacy" }),
      sessionKey("s1", { own: "user:ada" }),
      sessionKey("s1", { own: "user:ada", era: "legacy" }),
      sessionKey("s1", { own: "user:bob", era: "legacy" }),
    ];

    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual([
      "s1",
      "s1#~legacy",
      "s1#@user%3Aada",
      "s1#@user%3Aada#~legacy",
      "s1#@user%3Abob#~legacy",
    ]);
  });

  it("starts with the server id and ends with the thread, as the pool reads keys", () => {
    const key = sessionKey("s1", { own: "key:k1", era: "legacy", thread: "t1" });

    expect(key.split("#")[0]).toBe("s1");
    expect(key.endsWith("#t1")).toBe(true);
  });

  it("encodes the caller and the thread: no name reaches into another part of the key", () => {
    const keys = [
      sessionKey("s1", { own: "user:ada#~legacy" }),
      sessionKey("s1", { own: "user:ada", era: "legacy" }),
      sessionKey("s1", { own: "a#@b" }),
      sessionKey("s1", { own: "a", thread: "@b" }),
      sessionKey("s1", { own: "a#t1" }),
      sessionKey("s1", { own: "a", thread: "t1" }),
    ];

    expect(new Set(keys).size).toBe(keys.length);
    expect(keys[0]).toBe("s1#@user%3Aada%23~legacy");
    expect(sessionKey("s1", { thread: "user:ada/t#1" })).toBe("s1#user%3Aada%2Ft%231");
  });
});
