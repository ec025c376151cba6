import { createMemoryStore } from "@mcpgw/aws/memory";
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { Directory } from "./directory";

const logger = createLogger({ level: "error", sink: () => {} });
const ok = { ok: true as const, at: "2026-01-01T00:00:00.000Z", latencyMs: 3, toolCount: 1 };
const tools = [{ name: "search", inputSchema: { type: "object" } }];

describe("Directory", () => {
  it("gives each entry the profile its catalogue holds, and none where the catalogue has none", async () => {
    // Prepare
    const store = createMemoryStore();
    const [modern, old] = await Promise.all(
      ["modern", "old"].map((name) =>
        store.servers.create(parseServerSpec({ name, url: `https://${name}.example/mcp` })),
      ),
    );
    if (!modern || !old) throw new Error("not created");
    const profile = { protocolVersion: "2026-07-28", capabilities: { tools: {}, prompts: {} } };
    await store.statuses.recordAttempt(modern.id, 1, ok, { tools, profile });
    await store.statuses.recordAttempt(old.id, 1, ok, { tools });

    // Act
    const snapshot = await new Directory(store, logger).snapshot();

    // Assess
    expect(snapshot.byName.get("modern")?.profile).toEqual(profile);
    expect(snapshot.byId.get(modern.id)?.tools.has("modern__search")).toBe(true);
    expect(snapshot.byName.get("old")).not.toHaveProperty("profile");
  });
});
