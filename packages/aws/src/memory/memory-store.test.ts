import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseServerSpec } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { serverFieldContext } from "../sealing";
import { describeStoreContract } from "../store-contract";
import { createMemoryJobQueue, createMemoryStore } from ".";

describeStoreContract("memory", async () => createMemoryStore());

describe("memory store: what only it shows", () => {
  it("is never imported by production code (only by tests)", () => {
    const packages = join(import.meta.dirname, "../../..");
    const sources = readdirSync(packages, { recursive: true, encoding: "utf8" }).filter(
      (path) => /^[^/]+\/src\/.*\.ts$/.test(path) && !path.endsWith(".test.ts") && !path.includes("/memory/"),
    );

    const importers = sources.filter((path) =>
      /from "(@mcpgw\/aws\/memory|@mcpgw\/upstream\/linked-upstream|\.\/memory)(\/[^"]*)?"/.test(
        readFileSync(join(packages, path), "utf8"),
      ),
    );

    expect(sources.length).toBeGreaterThan(50);
    expect(importers).toEqual([]);
  });

  it("binds a sealed value to its context, as KMS does", async () => {
    const { sealer } = createMemoryStore();
    const sealed = await sealer.seal({ A: "1" }, serverFieldContext("s-1", "headers"));

    expect(await sealer.open(sealed, serverFieldContext("s-1", "headers"))).toEqual({ A: "1" });
    await expect(sealer.open(sealed, serverFieldContext("s-1", "env"))).rejects.toMatchObject({
      name: "SealError",
    });
    await expect(
      createMemoryStore().sealer.open(sealed, serverFieldContext("s-1", "headers")),
    ).rejects.toMatchObject({ name: "SealError" });
  });

  it("returns copies: changing what a read returned changes nothing stored", async () => {
    const store = createMemoryStore();
    const server = await store.servers.create(
      parseServerSpec({ name: "docs", url: "https://example.com/mcp" }),
    );
    const plain = await store.servers.getPlain(server.id);
    if (plain) plain.name = "changed";

    expect((await store.servers.getPlain(server.id))?.name).toBe("docs");
  });
});

describe("memory job queue", () => {
  it("holds a delayed job back until its delay passes, and refuses a delay SQS would", async () => {
    const jobs = createMemoryJobQueue();
    await jobs.send({ type: "retry", serverId: "s", generation: 1, after: "2026-01-01T00:00:00.000Z" }, 1);

    expect(await jobs.receive({ waitSeconds: 0 })).toEqual([]);
    expect(jobs.pending()).toMatchObject([{ delaySeconds: 1, job: { type: "retry" } }]);
    expect(await jobs.receive({ waitSeconds: 2 })).toHaveLength(1);
    await expect(jobs.send({ type: "probe", serverId: "s", generation: 1 }, 901)).rejects.toMatchObject({
      name: "QueueError",
    });
  });

  it("a long poll ends as soon as a job is sent, or when aborted", async () => {
    const jobs = createMemoryJobQueue();
    const waiting = jobs.receive({ waitSeconds: 20 });
    await jobs.send({ type: "probe", serverId: "s", generation: 1 });
    expect(await waiting).toHaveLength(1);

    const controller = new AbortController();
    const aborted = jobs.receive({ waitSeconds: 20, signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ name: "AbortError" });
  });

  it("delivers an unacknowledged job again after the visibility timeout, then dead-letters it", async () => {
    const jobs = createMemoryJobQueue({ visibilityTimeoutSeconds: 0, maxReceiveCount: 2 });
    jobs.sendRaw("not json");

    const first = await jobs.receive();
    const second = await jobs.receive();
    const third = await jobs.receive();

    expect(first.map((r) => r.messageId)).toEqual(second.map((r) => r.messageId));
    expect(first[0]?.receipt).not.toBe(second[0]?.receipt);
    expect(third).toEqual([]);
    expect(jobs.deadLetters()).toMatchObject([{ body: "not json", receiveCount: 2 }]);
  });
});
