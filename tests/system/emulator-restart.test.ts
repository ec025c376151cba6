/**
 * Regression: the emulator went away and came back empty; `/healthz` kept answering 200 while every
 * list and call answered 500, and the worker logged `QueueDoesNotExist` forever. Now `npm run dev`, as
 * a process on a moto server this test starts itself (the run's shared emulator is left alone), answers
 * `/readyz` 503 while the emulator is gone (`/healthz` stays 200) and, once an empty emulator is back on
 * the same port, re-creates its table, queue and key and serves again — same process, bounded time.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type Emulator, generateEmulatorCredentials, startMoto } from "../../scripts/lib/emulator";
import { freePort, parkedPort } from "../../scripts/lib/processes";
import { createTestConfig } from "../support/aws";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { createServer, settled, uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

/** How long `npm run dev` may take to serve again once the empty emulator answers. */
const RECOVERY_BOUND_MS = 20_000;

describe("npm run dev when its emulator comes back empty", () => {
  let moto: Emulator | undefined;
  let dev: DevProcess | undefined;

  afterAll(async () => {
    await dev?.stop();
    await moto?.stop();
  });

  it("answers /readyz 503 while it is gone, then re-creates its resources and serves again without a restart", async () => {
    // Prepare: a moto of this test's own, on a port nothing else will take while it is closed, requiring
    // a key of the test's (each start: `npm run emulator -- --port` with the stack's key does the same)
    const port = await parkedPort();
    const credentials = generateEmulatorCredentials();
    moto = await startMoto({ port, credentials });
    const config = await createTestConfig({ endpoint: moto.endpoint, credentials });
    dev = await startDevProcess(
      { AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey },
      { config },
    );
    const stack = dev;
    const readyz = async () => {
      const response = await fetch(`${stack.url}/readyz`);
      return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
    };
    expect(await readyz()).toEqual({
      status: 200,
      body: {
        ok: true,
        degraded: false,
        checks: { table: "ok", queue: "ok", key: "ok", runner: "ok", audit: "ok" },
      },
    });

    // Act: the emulator goes away
    await moto.stop();
    moto = undefined;

    // Assess: not ready (nothing answers), yet alive
    const down = await waitFor(readyz, (r) => r.status === 503, { timeoutMs: 10_000, intervalMs: 250 });
    expect(down.body.checks).toEqual({
      table: "unreachable",
      queue: "unreachable",
      key: "unreachable",
      runner: "ok",
      audit: "ok",
    });
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);

    // Act: an empty emulator comes back on the same port
    moto = await startMoto({ port, credentials });
    const back = Date.now();

    // Assess: ready again within the bound, by the same process, and serving: create, list, work a job
    await waitFor(readyz, (r) => r.status === 200, { timeoutMs: RECOVERY_BOUND_MS, intervalMs: 250 });
    expect(Date.now() - back).toBeLessThan(RECOVERY_BOUND_MS);
    const name = uniqueName("after-restart");
    const id = await createServer(stack, { name, url: `http://127.0.0.1:${await freePort()}/mcp` });
    const listed = await stack.call("GET", "/v1/servers");
    expect(listed.status).toBe(200);
    expect(listed.body.servers.map((s: { name: string }) => s.name)).toEqual([name]);
    // The poller took the connect job from the re-created queue (nothing listens there: failed).
    expect((await settled(stack, id)).state).toBe("failed");
    expect(stack.alive()).toBe(true);

    // The outage was logged, not spun on: a handful of lines per resource, and the re-creation.
    const lines = stack
      .logs()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { msg: string; dependency?: string });
    expect(lines.map((l) => l.msg)).toContain("local resources re-created");
    const waiting = lines.filter((l) => l.msg.endsWith("does not exist; waiting for it"));
    expect(waiting.length).toBeGreaterThan(0);
    for (const dependency of ["table", "queue", "key"]) {
      expect(waiting.filter((l) => l.dependency === dependency).length).toBeLessThanOrEqual(2);
    }
  }, 120_000);
});
