/**
 * Health that tells the truth: `/healthz` is liveness (checks nothing), `/readyz` checks the table,
 * the job queue and the KMS key (and, where asked, the stdio runner) — 503 problem+json naming what is
 * gone while it is gone, 200 once it is back; bounded in time and cached so it cannot hammer AWS.
 * Resources are taken away for real on the emulator (deleted, or the key scheduled for deletion).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AppDeps, createApp } from "@mcpgw/api";
import { type AwsConfig, createStore, type Dependency } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/lib/processes";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { createTestConfigWithOwnKey, recordCommands, removeResource, restoreResource } from "../support/aws";
import { expectJson, expectProblem } from "./helpers";

/** An app over `config` whose readiness answers are not reused unless a test asks. */
function appOver(config: AwsConfig, readiness: AppDeps["readiness"] = { cacheMs: 0 }, runnerUrl?: string) {
  const store = createStore(config);
  const logs: Array<Record<string, unknown>> = [];
  const app = createApp({
    store,
    logger: createLogger({ level: "debug", sink: (line) => logs.push(JSON.parse(line)) }),
    adminToken: TEST_ADMIN_TOKEN,
    allowPrivateUpstreams: true,
    readiness,
    ...(runnerUrl ? { runner: { url: runnerUrl, token: "unused" } } : {}),
  });
  return { app, store, logs };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/** A local HTTP server answering every request with `handler` (a stand-in for the runner's /healthz). */
async function httpServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("GET /readyz", () => {
  it("answers 200 with every check ok, without auth", async () => {
    const { app } = appOver(await createTestConfigWithOwnKey());

    const response = await app.request("/readyz");

    expect(await expectJson(response, 200)).toEqual({
      ok: true,
      degraded: false,
      checks: { table: "ok", queue: "ok", key: "ok" },
    });
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it.each<[Dependency, string, string]>([
    ["table", "missing", "the table is missing"],
    ["queue", "missing", "the job queue is missing"],
    ["key", "unusable", "the KMS key is disabled or pending deletion"],
  ])(
    "answers 503 naming the %s while it is gone (%s), 200 once it is back; /healthz stays 200",
    async (dependency, state, sentence) => {
      // Prepare
      const config = await createTestConfigWithOwnKey();
      const { app } = appOver(config);
      await expectJson(await app.request("/readyz"), 200);

      // Act: take it away
      await removeResource(config, dependency);
      const gone = await app.request("/readyz");
      const alive = await app.request("/healthz");

      // Assess
      const problem = await expectProblem(gone, 503, "service.not_ready");
      expect(problem.checks).toEqual({ table: "ok", queue: "ok", key: "ok", [dependency]: state });
      expect(problem.detail).toBe(`Not ready: ${sentence}.`);
      expect(alive.status).toBe(200);

      // Act: bring it back
      await restoreResource(config, dependency);

      // Assess
      expect(await expectJson(await app.request("/readyz"), 200)).toMatchObject({
        ok: true,
        checks: { table: "ok", queue: "ok", key: "ok" },
      });
    },
  );

  it("answers 503 key: missing when the configured key does not exist", async () => {
    const config = await createTestConfigWithOwnKey();
    const { app } = appOver({ ...config, keyId: "alias/no-such-key-for-readyz" });

    const problem = await expectProblem(await app.request("/readyz"), 503, "service.not_ready");

    expect(problem.checks).toEqual({ table: "ok", queue: "ok", key: "missing" });
    expect(problem.detail).toBe("Not ready: the KMS key is missing.");
  });

  it("answers 503 naming every dependency that is gone at once", async () => {
    const config = await createTestConfigWithOwnKey();
    const { app } = appOver(config);

    await Promise.all([removeResource(config, "table"), removeResource(config, "queue")]);
    const problem = await expectProblem(await app.request("/readyz"), 503, "service.not_ready");

    expect(problem.checks).toEqual({ table: "missing", queue: "missing", key: "ok" });
    expect(problem.detail).toBe("Not ready: the table is missing and the job queue is missing.");
  });

  it("checks the stdio runner's /healthz when asked: 503 runner unreachable, 200 once it answers", async () => {
    const config = await createTestConfigWithOwnKey();
    const closedPort = await freePort();
    const down = appOver(config, { cacheMs: 0, runner: true }, `http://127.0.0.1:${closedPort}`);
    let asked = "";
    const up = appOver(
      config,
      { cacheMs: 0, runner: true },
      await httpServer((req, res) => {
        asked = `${req.method} ${req.url}`;
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      }),
    );

    const problem = await expectProblem(await down.app.request("/readyz"), 503, "service.not_ready");
    const ready = await expectJson(await up.app.request("/readyz"), 200);

    expect(problem.checks).toEqual({ table: "ok", queue: "ok", key: "ok", runner: "unreachable" });
    expect(problem.detail).toBe("Not ready: the stdio runner is unreachable.");
    expect(ready.checks).toEqual({ table: "ok", queue: "ok", key: "ok", runner: "ok" });
    expect(asked).toBe("GET /healthz");
  });

  it("answers within its bound when a check never answers (timeout)", async () => {
    const config = await createTestConfigWithOwnKey();
    const hanging = await httpServer(() => {
      // never answers
    });
    const { app } = appOver(config, { cacheMs: 0, runner: true, timeoutMs: 300 }, hanging);

    const started = performance.now();
    const problem = await expectProblem(await app.request("/readyz"), 503, "service.not_ready");
    const tookMs = performance.now() - started;

    expect(problem.checks).toMatchObject({ runner: "timeout" });
    expect(problem.detail).toBe("Not ready: the stdio runner is not answering in time.");
    expect(tookMs).toBeLessThan(1_500);
  });

  it("runs its checks at most once per cache period, however often it is asked", async () => {
    // Prepare
    const config = await createTestConfigWithOwnKey();
    const { app, store } = appOver(config, { cacheMs: 60_000 });
    const sent = recordCommands(store.clients);

    // Act: 50 requests, 10 at a time
    const statuses: number[] = [];
    for (let round = 0; round < 5; round++) {
      const responses = await Promise.all(Array.from({ length: 10 }, () => app.request("/readyz")));
      statuses.push(...responses.map((r) => r.status));
    }

    // Assess: one round of checks (the queue URL is resolved once by name locally)
    expect(statuses).toEqual(Array(50).fill(200));
    expect(sent.map((c) => c.command).sort()).toEqual([
      "DescribeKeyCommand",
      "GetItemCommand",
      "GetQueueAttributesCommand",
      "GetQueueUrlCommand",
    ]);
  });

  it("checks again once its answer is older than the cache period", async () => {
    const config = await createTestConfigWithOwnKey();
    const { app, store } = appOver(config, { cacheMs: 100 });
    const sent = recordCommands(store.clients);

    await app.request("/readyz");
    await app.request("/readyz");
    await new Promise((resolve) => setTimeout(resolve, 150));
    await app.request("/readyz");

    expect(sent.filter((c) => c.command === "DescribeKeyCommand")).toHaveLength(2);
  });

  it("logs a missing resource once while it stays missing, and once that it is back", async () => {
    const config = await createTestConfigWithOwnKey();
    const { app, logs } = appOver(config);

    await removeResource(config, "table");
    for (let i = 0; i < 10; i++) await app.request("/readyz");
    await restoreResource(config, "table");
    await app.request("/readyz");
    await app.request("/readyz");

    const messages = logs.filter((line) => line.dependency === "table").map((line) => [line.level, line.msg]);
    expect(messages).toEqual([
      ["error", `table ${config.tableName} does not exist; waiting for it`],
      ["info", `table ${config.tableName} is back`],
    ]);
    expect(logs.find((line) => line.dependency === "table")).toMatchObject({ source: "readiness" });
  });
});
