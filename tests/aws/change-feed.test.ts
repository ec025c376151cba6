/**
 * The data plane's directory reads changes, not the world (on the emulator's DynamoDB, counted by
 * command): with nothing changed a refresh is one query; a change re-reads that server's partition
 * only; a delete is seen through its tombstone.
 */
import { createLogger, parseServerSpec } from "@mcpgw/core";
import { beforeAll, describe, expect, it } from "vitest";
import { Directory } from "../../packages/api/src/gateway/directory";
import { createTestStore, recordCommands } from "../support/aws";

const logger = createLogger({ level: "error", sink: () => {} });
const ok = () => ({ ok: true as const, at: new Date().toISOString(), latencyMs: 3, toolCount: 1 });
const tools = [{ name: "search", inputSchema: { type: "object" } }];

describe("directory on the change feed (DynamoDB)", () => {
  let store: Awaited<ReturnType<typeof createTestStore>>;
  let sent: Array<{ command: string }>;
  const names = (from: number) => sent.slice(from).map((call) => call.command);

  beforeAll(async () => {
    store = await createTestStore();
    sent = recordCommands(store.clients);
  });

  async function created(name: string) {
    const server = await store.servers.create(parseServerSpec({ name, url: `https://${name}.example/mcp` }));
    await store.statuses.recordAttempt(server.id, 1, ok(), { tools });
    return server;
  }

  it("a refresh with nothing changed is one query; a change re-reads one partition; a delete drops it", async () => {
    // Prepare: 20 servers, a directory that refreshes on every look, past its first full read.
    const servers = await Promise.all(Array.from({ length: 20 }, (_, i) => created(`feed-${i}`)));
    const directory = new Directory(store, logger, 0);
    await directory.snapshot();
    await directory.fresh(0); // re-reads, once, what changed within the feed's lookback

    // Act 1: nothing changed.
    let from = sent.length;
    const unchanged = await directory.fresh(0);

    // Assess 1
    expect(names(from)).toEqual(["QueryCommand"]);
    expect(unchanged.byName.get("feed-3")?.tools.has("feed-3__search")).toBe(true);

    // Act 2: one server's config changes.
    const edited = servers[7];
    if (!edited) throw new Error("not created");
    await store.servers.update(
      edited,
      parseServerSpec({ name: "feed-7-renamed", url: "https://feed-7.example/mcp" }),
    );
    from = sent.length;
    const changed = await directory.fresh(0);

    // Assess 2: the feed, then that server's partition: two queries, no KMS.
    expect(names(from)).toEqual(["QueryCommand", "QueryCommand"]);
    expect(changed.byName.has("feed-7")).toBe(false);
    expect(changed.byName.get("feed-7-renamed")?.status?.state).toBe("connecting");
    expect(changed.byName.get("feed-8")).toBe(unchanged.byName.get("feed-8"));

    // Act 3: one is deleted.
    const removed = servers[11];
    if (!removed) throw new Error("not created");
    await store.servers.remove(removed.id);
    const after = await directory.fresh(0);

    // Assess 3
    expect(after.byId.has(removed.id)).toBe(false);
    expect(after.byId.size).toBe(unchanged.byId.size - 1);
  });
});
