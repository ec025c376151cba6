/** The latency history as DynamoDB stores it: one write a point, no read, each ring bounded. */
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { type AwsStore, keys } from "@mcpgw/aws";
import { parseServerSpec } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createTestStore } from "../support/aws";
import { recordAwsCalls } from "../support/aws-calls";

describe("latency history on DynamoDB", () => {
  it("a point is one UpdateItem and no read (a ring's first: one transaction more); a ring never holds more than its 120 slots", async () => {
    // Prepare
    const store = (await createTestStore()) as AwsStore;
    const server = await store.servers.create(
      parseServerSpec({ name: "charted", url: "https://example.com/mcp" }),
    );
    const calls = recordAwsCalls(store.clients);
    // 300 probes a minute apart (two and a half rings), the last one 30 s ago
    const now = Date.now();
    const at = (i: number) => now - (300 - i) * 60_000 + 30_000;

    // Act
    for (let i = 0; i < 300; i++)
      await store.latency.record(server.id, { at: at(i), kind: "probe", ms: i, ok: true });

    // Assess
    expect(calls.summary()).toEqual({ "dynamodb:UpdateItem": 300, "dynamodb:TransactWriteItems": 1 });
    const { Item = {} } = await store.clients.ddb.send(
      new GetCommand({ TableName: store.config.tableName, Key: keys.serverLatency(server.id, "probe") }),
    );
    const slots = Object.keys(Item).filter((name) => /^s\d+$/.test(name));
    expect(slots).toHaveLength(120);
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(5_000);
    const points = await store.latency.read(server.id);
    expect(points.map((point) => point.ms)).toEqual(Array.from({ length: 120 }, (_, i) => 180 + i));
  });
});
