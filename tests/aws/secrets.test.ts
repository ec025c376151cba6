import { createStore } from "@mcpgw/aws";
import { describe, expect, it } from "vitest";
import { createTestConfig, scanTable } from "../support/aws";

describe("secret store", () => {
  it("seals values, lists key names only, and deletes", async () => {
    const config = await createTestConfig();
    const store = createStore(config);
    const sentinel = "sentinel-secret-91c2";

    await store.secrets.put("db", { PASSWORD: sentinel, USER: "app" });

    expect(JSON.stringify(await scanTable(config))).not.toContain(sentinel);
    expect(await store.secrets.list()).toEqual([
      { name: "db", keys: ["PASSWORD", "USER"], updatedAt: expect.any(String) },
    ]);
    expect(await store.secrets.get("db")).toEqual({ PASSWORD: sentinel, USER: "app" });
    expect(await store.secrets.remove("db")).toBe(true);
    expect(await store.secrets.get("db")).toBeUndefined();
    expect(await store.secrets.remove("db")).toBe(false);
  });
});
