/**
 * Connection lifecycle — the outer grace. The probe's own 10 s deadline settles every hang the SDK can
 * see (failures.test.ts shows `not_responding` at ~10 s); the 5 s outer grace is the backstop for a probe
 * that never settles at all (a stuck client library). Here the probe is replaced by one that never
 * resolves, and the attempt — and the status written from it — must still settle `failed/not_responding`.
 */
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { attemptTarget, processJob, type WorkerDeps } from "@mcpgw/worker";
import { describe, it, vi } from "vitest";
import { createTestStore } from "../support/aws";
import { drainQueue } from "./helpers";

const probe = vi.hoisted(() => ({ calls: 0 }));

vi.mock("@mcpgw/upstream", async (importOriginal) => {
  const original = await importOriginal<typeof import("@mcpgw/upstream")>();
  return {
    ...original,
    probeUpstream: () => {
      probe.calls++;
      return new Promise(() => {}); // never settles, whatever the deadline says
    },
  };
});

describe("connection lifecycle: outer grace", () => {
  it("a probe that never settles is force-settled not_responding after deadline + grace", async ({
    expect,
  }) => {
    const started = performance.now();
    const result = await attemptTarget(
      { url: "http://127.0.0.1:9/mcp", headers: {} },
      { fetch: createGuardedFetch({ allowPrivate: true }), deadlineMs: 300, graceMs: 400 },
    );
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ ok: false, reason: "not_responding" });
    expect(result.ok === false && result.error).toMatch(/did not settle within 0\.7 s/);
    expect(elapsed).toBeGreaterThanOrEqual(690);
    expect(elapsed).toBeLessThan(2_000);
  });

  it("the worker writes failed/not_responding from the forced result and schedules the retry", async ({
    expect,
  }) => {
    const store = await createTestStore();
    const deps: WorkerDeps = {
      store,
      logger: createLogger({ level: "error", sink: () => {} }),
      fetch: createGuardedFetch({ allowPrivate: true }),
      deadlineMs: 300,
      graceMs: 400,
      retryDelaySeconds: 0,
    };
    const server = await store.servers.create(
      parseServerSpec({ name: "stuck", url: "http://127.0.0.1:9/mcp" }),
    );
    const calls = probe.calls;
    expect(await processJob(deps, { type: "connect", serverId: server.id, generation: 1 }, "m-stuck")).toBe(
      "failed",
    );
    expect(probe.calls).toBe(calls + 1);
    expect(await store.statuses.get(server.id)).toMatchObject({
      state: "failed",
      reason: "not_responding",
      lastError: expect.stringMatching(/did not settle/),
    });
    const queued = await drainQueue(store.clients.sqs, await store.jobs.url());
    expect(queued.map((m) => JSON.parse(m.body))).toEqual([
      { type: "retry", serverId: server.id, generation: 1, after: expect.any(String) },
    ]);
  });
});
