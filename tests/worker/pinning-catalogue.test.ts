/**
 * Pinning holds when the catalogue does not cooperate (worker against the real emulator, a real upstream):
 * - a damaged catalogue under `approve` heals at once from the current listing (its pins are lost, said in
 *   a warning): the server's tools are served again, none waits;
 * - pending changes are bounded by bytes: an upstream that rewrites every definition of a large catalogue
 *   leaves the server connected, its pinned tools served, with a few changes pending (not a catalogue
 *   too large to store, which would fail the server);
 * - a catalogue that keeps changing while a probe decides (admins approving meanwhile) drops the probe's
 *   result after its retries — the server is never recorded failed.
 */

import { randomBytes } from "node:crypto";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsStore, keys } from "@mcpgw/aws";
import { createLogger, MAX_PENDING_BYTES, parseServerSpec } from "@mcpgw/core";
import { createGuardedFetch } from "@mcpgw/upstream";
import { PIN_ATTEMPTS, processJob, type WorkerDeps } from "@mcpgw/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createTestStore } from "../support/aws";

/** What the worker warned, as JSON lines. */
const warnings: string[] = [];
const logger = createLogger({ level: "warn", sink: (line) => warnings.push(line) });

describe("pinning when the catalogue does not cooperate", () => {
  let store: AwsStore;
  let upstream: Upstream;
  let deps: WorkerDeps;

  beforeAll(async () => {
    store = (await createTestStore()) as AwsStore;
    upstream = await startUpstream({ name: "pin-catalogue-upstream" });
    deps = { store, logger, fetch: createGuardedFetch({ allowPrivate: true }) };
  });
  afterAll(async () => {
    await upstream?.close();
  });

  async function create(): Promise<string> {
    const name = `pin-${Math.random().toString(36).slice(2, 8)}`;
    return (await store.servers.create(parseServerSpec({ name, url: upstream.url }))).id;
  }

  it("a damaged catalogue under approve heals from the current listing, with a warning", {
    timeout: 30_000,
  }, async () => {
    const id = await create();
    expect(await processJob(deps, { type: "connect", serverId: id, generation: 1 }, "c-1")).toBe("connected");
    const listed = (await store.statuses.getCatalog(id))?.tools.map((tool) => tool.name).sort();
    expect(listed?.length).toBeGreaterThan(0);
    // The head's hash no longer matches its body: the catalogue reads back damaged.
    const key = keys.serverCatalog(id);
    const head = (
      await store.clients.ddb.send(new GetCommand({ TableName: store.config.tableName, Key: key }))
    ).Item;
    await store.clients.ddb.send(
      new PutCommand({ TableName: store.config.tableName, Item: { ...head, hash: "damaged" } }),
    );
    expect((await store.statuses.getCatalog(id))?.damaged).toBe(true);

    expect(await processJob(deps, { type: "probe", serverId: id, generation: 1 }, "p-1")).toBe("connected");
    const catalog = await store.statuses.getCatalog(id);
    expect(catalog?.damaged).toBeFalsy();
    expect(catalog?.tools.map((tool) => tool.name).sort()).toEqual(listed);
    expect(catalog?.pins?.changes ?? []).toEqual([]);
    expect((await store.statuses.get(id))?.pendingChanges ?? 0).toBe(0);
    expect(warnings.some((line) => line.includes("its pins are lost"))).toBe(true);
  });

  it("a rewrite of every large definition leaves the pinned tools served and a bounded few pending", {
    timeout: 60_000,
  }, async () => {
    // 60 tools of ~50 KB of poorly compressible text: pinned, ~2.3 MB compressed; all of them again would pass the limit.
    const large = await startUpstream({
      name: "pin-large",
      extraTools: 60,
      extraToolDescriptionBytes: 50_000,
    });
    try {
      const id = (
        await store.servers.create(parseServerSpec({ name: `pin-large-${Date.now()}`, url: large.url }))
      ).id;
      expect(await processJob(deps, { type: "connect", serverId: id, generation: 1 }, "l-1")).toBe(
        "connected",
      );
      const pinned = (await store.statuses.getCatalog(id))?.tools;
      for (let i = 0; i < 60; i++)
        large.setToolDescription(
          `tool_${String(i).padStart(3, "0")}`,
          randomBytes(37_500).toString("base64"),
        );

      expect(await processJob(deps, { type: "probe", serverId: id, generation: 1 }, "l-2")).toBe("connected");
      const catalog = await store.statuses.getCatalog(id);
      expect(catalog?.tools).toEqual(pinned);
      const pending = catalog?.pins?.changes ?? [];
      expect(pending.length).toBeGreaterThan(0);
      expect(
        pending.reduce((sum, change) => sum + JSON.stringify(change.after).length, 0),
      ).toBeLessThanOrEqual(MAX_PENDING_BYTES);
      expect((await store.statuses.get(id))?.state).toBe("connected");
    } finally {
      await large.close();
    }
  });

  it("a catalogue that keeps moving drops the probe's result; the server is not failed", {
    timeout: 30_000,
  }, async () => {
    const id = await create();
    let reads = 0;
    // Every read names a catalogue other than the stored one, as if an admin decided between read and write.
    const moving: WorkerDeps = {
      ...deps,
      store: {
        ...store,
        statuses: {
          ...store.statuses,
          getCatalog: async (serverId: string) => {
            reads++;
            const stored = await store.statuses.getCatalog(serverId);
            return {
              serverId,
              updatedAt: new Date().toISOString(),
              tools: [],
              ...stored,
              hash: `moved-${reads}`,
            };
          },
        },
      } as AwsStore,
    };
    expect(await processJob(moving, { type: "connect", serverId: id, generation: 1 }, "m-1")).toBe("dropped");
    expect(reads).toBe(PIN_ATTEMPTS);
    expect((await store.statuses.get(id))?.state).not.toBe("failed");
  });
});
