import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import {
  type AwsConfig,
  createAwsClients,
  createKmsSealer,
  createServerRepository,
  createStore,
  keys,
  serverFieldContext,
} from "@mcpgw/aws";
import { AppError, parseServerSpec, type ServerSpec } from "@mcpgw/core";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestConfig, scanTable } from "../support/aws";

const SENTINEL_HEADER = "sentinel-header-7f3a9c";
const SENTINEL_ENV = "sentinel-env-4b2e81";

function httpSpec(name: string, extra: Record<string, unknown> = {}): ServerSpec {
  return parseServerSpec({ name, url: "https://example.com/mcp", ...extra });
}

describe("server repository on DynamoDB", () => {
  let config: AwsConfig;
  let store: ReturnType<typeof createStore>;

  beforeAll(async () => {
    config = await createTestConfig();
    store = createStore(config);
  });

  it("lets exactly one of many concurrent creates of the same name win", async () => {
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, () => store.servers.create(httpSpec("race"))),
    );

    const won = attempts.filter((a) => a.status === "fulfilled");
    const lost = attempts.flatMap((a) => (a.status === "rejected" ? [a.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    for (const error of lost) expect(error).toMatchObject({ code: "server.name_taken" });
    const configs = (await scanTable(config)).filter((item) => item.sk === "CONFIG" && item.name === "race");
    expect(configs).toHaveLength(1);
  });

  it("stores headers and env sealed: no sentinel in raw items, exact round trip, bound to the server", async () => {
    const http = await store.servers.create(
      httpSpec("sealed-http", {
        headers: { Authorization: `Bearer ${SENTINEL_HEADER}`, "X-Api-Key": SENTINEL_HEADER },
      }),
    );
    const stdio = await store.servers.create(
      parseServerSpec({
        name: "sealed-stdio",
        command: "npx",
        args: ["-y", "pkg"],
        env: { TOKEN: SENTINEL_ENV },
      }),
    );

    const raw = JSON.stringify(await scanTable(config));
    expect(raw).not.toContain(SENTINEL_HEADER);
    expect(raw).not.toContain(SENTINEL_ENV);
    expect(await store.servers.get(http.id)).toMatchObject({
      headers: { Authorization: `Bearer ${SENTINEL_HEADER}`, "X-Api-Key": SENTINEL_HEADER },
    });
    expect(await store.servers.get(stdio.id)).toMatchObject({ env: { TOKEN: SENTINEL_ENV } });

    const { Items } = await store.clients.ddb.send(new ScanCommand({ TableName: config.tableName }));
    const sealed = Items?.find((item) => item.id === http.id && item.sk === "CONFIG")?.sealedHeaders;
    await expect(store.sealer.open(sealed, serverFieldContext(stdio.id, "headers"))).rejects.toMatchObject({
      name: "SealError",
    });
    await expect(store.sealer.open(sealed, serverFieldContext(http.id, "env"))).rejects.toMatchObject({
      name: "SealError",
    });
  });

  it("fails closed: with an unusable key nothing is stored", async () => {
    const clients = createAwsClients(config);
    const broken = createServerRepository(
      clients.ddb,
      config.tableName,
      createKmsSealer(clients.kms, "alias/does-not-exist"),
    );
    const before = (await scanTable(config)).length;

    await expect(
      broken.create(httpSpec("no-key", { headers: { Authorization: "Bearer x" } })),
    ).rejects.toMatchObject({
      name: "SealError",
    });

    expect(await scanTable(config)).toHaveLength(before);
    expect(await store.servers.getByName("no-key")).toBeUndefined();
  });

  it("gets by id and by name, lists sorted by name across pages", async () => {
    const names = ["zeta", "alpha", "mid-1", "Beta"];
    const created = await Promise.all(names.map((name) => store.servers.create(httpSpec(name))));

    expect(await store.servers.resolve(created[0]!.id)).toMatchObject({ name: "zeta" });
    expect(await store.servers.resolve("alpha")).toMatchObject({ id: created[1]!.id });
    expect(await store.servers.resolve("missing")).toBeUndefined();
    const listed = (await store.servers.listPlain()).map((s) => s.name);
    expect(listed).toEqual([...listed].sort());
    expect(listed).toEqual(expect.arrayContaining(names));
  });

  it("updates with optimistic concurrency and moves the name claim on rename", async () => {
    const server = await store.servers.create(httpSpec("before-rename"));

    const renamed = await store.servers.update(server, { ...server, name: "after-rename" });
    await expect(store.servers.update(server, { ...server, name: "stale-edit" })).rejects.toMatchObject({
      code: "server.version_conflict",
    });

    expect(renamed.version).toBe(2);
    expect(await store.servers.getByName("before-rename")).toBeUndefined();
    expect(await store.servers.getByName("after-rename")).toMatchObject({ id: server.id, version: 2 });
    expect(await store.servers.getByName("stale-edit")).toBeUndefined();
    await store.servers.create(httpSpec("before-rename"));
  });

  it("refuses a rename onto a taken name and keeps both servers intact", async () => {
    const a = await store.servers.create(httpSpec("taken-a"));
    await store.servers.create(httpSpec("taken-b"));

    await expect(store.servers.update(a, { ...a, name: "taken-b" })).rejects.toBeInstanceOf(AppError);

    expect(await store.servers.getByName("taken-a")).toMatchObject({ id: a.id, version: 1 });
  });

  it("delete leaves nothing of that server but its change-feed tombstone, which expires", async () => {
    const server = await store.servers.create(
      parseServerSpec({ name: "doomed", command: "node", env: { SECRET: SENTINEL_ENV } }),
    );
    await store.statuses.recordAttempt(
      server.id,
      1,
      { ok: true, at: new Date().toISOString(), latencyMs: 3, toolCount: 1 },
      { tools: [{ name: "t", inputSchema: { type: "object" } }] },
    );
    await store.latency.record(server.id, { at: Date.now(), kind: "probe", ms: 3, ok: true });
    await store.latency.record(server.id, { at: Date.now(), kind: "calls", ms: 1, ok: true, count: 1 });

    expect(await store.servers.remove(server.id)).toBe(true);
    expect(await store.servers.remove(server.id)).toBe(false);

    const left = (await scanTable(config)).filter(
      (item) => JSON.stringify(item).includes(server.id) || item.pk === "NAME#doomed",
    );
    expect(left).toEqual([
      {
        ...keys.serverTombstone(server.id),
        changeFeed: expect.any(String),
        changedAt: expect.any(String),
        expiresAt: expect.any(Number),
      },
    ]);
    expect((left[0]?.expiresAt as number) * 1000 - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
  });
});
