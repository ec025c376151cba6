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
      "s1#@user:ada",
      "s1#@user:ada#~legacy",
      "s1#@user:bob#~legacy",
    ]);
  });

  it("starts with the server id and ends with the thread, as the pool reads keys", () => {
    const key = sessionKey("s1", { own: "key:k1", era: "legacy", thread: "t1" });

    expect(key.split("#")[0]).toBe("s1");
    expect(key.endsWith("#t1")).toBe(true);
  });
});
