import { parseServerSpec } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createMemoryStore } from "./memory";
import { recordFailure } from "./record-failure";

const LOST = "the stdio runner serving it was lost";

describe("recordFailure", () => {
  it("records a lost runner's server as moving (connecting) once per outage; its retry failing the same way is a failure", async () => {
    // Prepare
    const store = createMemoryStore();
    const server = await store.servers.create(parseServerSpec({ name: "tiny", command: "node" }));
    const t0 = Date.now();
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    await store.statuses.recordAttempt(server.id, 1, { ok: true, at: at(0), latencyMs: 3, toolCount: 1 });
    const lost = (ms: number) =>
      recordFailure(
        store,
        server.id,
        1,
        { at: at(ms), reason: "unreachable", error: LOST, moving: true },
        { retryDelaySeconds: 5, maxRetryDelaySeconds: 5 },
      );

    // Act / Assess: the loss, and a second call's failure before its retry is due — moving both times.
    await lost(1_000);
    expect(await store.statuses.get(server.id)).toMatchObject({ state: "connecting", lastError: LOST });
    await lost(2_000);
    expect(await store.statuses.get(server.id)).toMatchObject({ state: "connecting", lastError: LOST });
    // The retry (due once the runner lapsed) fails the same way: no runner serves it — failed.
    await lost(7_000);
    expect(await store.statuses.get(server.id)).toMatchObject({
      state: "failed",
      reason: "unreachable",
      error: LOST,
    });
  });
});
