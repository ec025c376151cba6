import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PRICES } from "./aws-prices";
import {
  addMetered,
  billedMs,
  emptyUsage,
  filledRingSize,
  itemSize,
  lambdaDollars,
  largest,
  Meter,
  metricsDollars,
  minus,
  only,
  readUnits,
  repriced,
  storageDollars,
  type TableShape,
  unitsOf,
  updatedNames,
  without,
  writeUnits,
} from "./cost-model";

const SHAPE: TableShape = {
  partitionKey: "pk",
  sortKey: "sk",
  indexes: [
    { name: "byKind", hashKey: "kind", rangeKey: "kindSort", projection: "all" },
    { name: "byChange", hashKey: "changeFeed", rangeKey: "changedAt", projection: "keys" },
  ],
  lines: [
    { suffix: "change feed", index: "byChange" },
    { suffix: "audit", pkPrefix: "AUDIT#" },
  ],
  audit: { pkPrefix: "AUDIT#", eventsAttribute: "events" },
};

/** An exchange as the counting proxy hands it over. */
function exchange(operation: string, request: unknown, response: unknown = {}, status = 200) {
  return {
    operation: `DynamoDB.${operation}`,
    request: Buffer.from(JSON.stringify({ TableName: "t", ...(request as object) })),
    response: Buffer.from(JSON.stringify(response)),
    status,
  };
}

const S = (value: string) => ({ S: value });

describe("sizes and units", () => {
  it("sizes an item by DynamoDB's rules: names, strings, numbers, maps and lists", () => {
    const item = {
      pk: S("SERVER#1"), // 2 + 8
      n: { N: "123" }, // 1 + (2 + 1)
      b: { BOOL: true }, // 1 + 1
      m: { M: { a: S("xy") } }, // 1 + (3 + 1 + 1 + 2)
      l: { L: [S("a"), { N: "1" }] }, // 1 + (3 + (1 + 1) + (1 + 2))
    };
    expect(itemSize(item)).toBe(10 + 4 + 2 + 8 + 9);
  });

  it("rounds reads up to 4 KB (half for eventually consistent) and writes up to 1 KB, one unit at least", () => {
    expect(readUnits(0, false)).toBe(0.5);
    expect(readUnits(4096, true)).toBe(1);
    expect(readUnits(4097, true)).toBe(2);
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
  });

  it("reads the attributes an update expression sets and removes", () => {
    expect(
      updatedNames({
        UpdateExpression: "SET #at = :at, b = if_not_exists(b, :z) REMOVE c ADD n :one",
        ExpressionAttributeNames: { "#at": "changedAt" },
      }),
    ).toEqual({ set: [{ name: "changedAt", value: ":at" }, { name: "b" }, { name: "n" }], removed: ["c"] });
  });
});

describe("the meter", () => {
  const config = {
    pk: S("SERVER#1"),
    sk: S("CONFIG"),
    kind: S("SERVER"),
    kindSort: S("docs"),
    changeFeed: S("SERVERS"),
    changedAt: S("0000000000001"),
  };

  it("charges a new item in both indexes three writes: the table and an entry in each", () => {
    const meter = new Meter(SHAPE);
    const metered = meter.meter(exchange("PutItem", { Item: config }));
    expect(metered).toMatchObject({ line: "DynamoDB.PutItem", writeUnits: 3, readUnits: 0 });
  });

  it("charges an update that moves the change stamp a delete and a put in the keys-only index", () => {
    const meter = new Meter(SHAPE);
    meter.meter(exchange("PutItem", { Item: config }));
    const update = exchange("UpdateItem", {
      Key: { pk: config.pk, sk: config.sk },
      UpdateExpression: "SET #at = :at",
      ExpressionAttributeNames: { "#at": "changedAt" },
      ExpressionAttributeValues: { ":at": S("0000000000002") },
    });
    // The table, the byKind entry (its item changed), the byChange entry moved (2).
    expect(meter.meter(update).writeUnits).toBe(4);
    // The same stamp again: the byChange entry stays; byKind's item is unchanged.
    expect(meter.meter(update).writeUnits).toBe(1);
  });

  it("charges transactional writes twice, condition checks too, and a refused condition its write", () => {
    const meter = new Meter(SHAPE);
    const big = { pk: S("LATENCY#1"), sk: S("probe"), ring: S("x".repeat(1500)) };
    const transaction = exchange("TransactWriteItems", {
      TransactItems: [
        { ConditionCheck: { Key: { pk: config.pk, sk: S("STATUS") } } },
        { Put: { Item: big } },
      ],
    });
    expect(meter.meter(transaction).writeUnits).toBe(2 * 1 + 2 * 2);
    const refused = exchange("PutItem", { Item: big }, { __type: "x#ConditionalCheckFailedException" }, 400);
    expect(meter.meter(refused).writeUnits).toBe(2);
    expect(
      meter.meter(exchange("PutItem", { Item: big }, { __type: "x#ValidationException" }, 400)).writeUnits,
    ).toBe(0);
  });

  it("reads: by the bytes answered, consistent or not, an index query eventually consistent, on its own line", () => {
    const meter = new Meter(SHAPE);
    const item = { pk: S("SERVER#1"), sk: S("CATALOG"), tools: S("t".repeat(5000)) };
    expect(
      meter.meter(exchange("GetItem", { Key: {}, ConsistentRead: true }, { Item: item })).readUnits,
    ).toBe(2);
    expect(meter.meter(exchange("GetItem", { Key: {} }, {})).readUnits).toBe(0.5);
    const feed = meter.meter(
      exchange(
        "Query",
        { IndexName: "byChange", ConsistentRead: false },
        { Items: [], Count: 0, ScannedCount: 0 },
      ),
    );
    expect(feed).toMatchObject({ line: "DynamoDB.Query (change feed)", readUnits: 0.5 });
    // A filtered query costs what it scanned.
    const filtered = meter.meter(
      exchange("Query", { ConsistentRead: true }, { Items: [item], Count: 1, ScannedCount: 3 }),
    );
    expect(filtered.readUnits).toBe(readUnits(3 * itemSize(item), true));
  });

  it("counts audit packs apart: items, events, and those holding one event", () => {
    const meter = new Meter(SHAPE);
    const json = (events: number) => JSON.stringify(Array.from({ length: events }, (_, i) => ({ i })));
    // A pack as written now (deflated) and as written before (a string): both counted the same.
    const pack = (events: number, sk: string, deflated = sk === "b") => ({
      PutRequest: {
        Item: {
          pk: S("AUDIT#2025-01-01"),
          sk: S(sk),
          kind: S("AUDIT#srv#2025-01-01"),
          kindSort: S(sk),
          events: deflated ? { B: deflateRawSync(json(events)).toString("base64") } : S(json(events)),
        },
      },
    });
    const metered = meter.meter(
      exchange(
        "BatchWriteItem",
        { RequestItems: { t: [pack(1, "a"), pack(3, "b")] } },
        { UnprocessedItems: {} },
      ),
    );
    expect(metered.line).toBe("DynamoDB.BatchWriteItem (audit)");
    expect(metered.writeUnits).toBe(4); // each pack: the item and its byKind entry
    expect(metered.audit).toMatchObject({ items: 2, events: 4, singles: 1, singleWriteUnits: 2 });
  });

  it("leaves other services' requests at no units, their bytes counted", () => {
    const metered = new Meter(SHAPE).meter({
      operation: "KMS.Decrypt",
      request: Buffer.from("{}"),
      response: Buffer.from("{}"),
      status: 200,
    });
    expect(metered).toEqual({ line: "KMS.Decrypt", readUnits: 0, writeUnits: 0, wireBytes: 4 });
  });
});

describe("rings", () => {
  it("sizes a latency ring as if all its slots were filled like the ones it holds", () => {
    const rest = { pk: S("LATENCY#1"), sk: S("probe"), expiresAt: { N: "1700000000" } };
    const slot = { s1: { L: [{ N: "1700000000000" }, { N: "12.5" }, { N: "1" }] } };
    const meter = new Meter(SHAPE);
    meter.meter(exchange("PutItem", { Item: { ...rest, ...slot } }));
    const [ring] = meter.itemsUnder("LATENCY#", "probe");
    expect(filledRingSize(ring!, 120)).toBe(itemSize(rest) + 120 * itemSize(slot));
    // A slot written by an update is known too.
    meter.meter(
      exchange("UpdateItem", {
        Key: { pk: rest.pk, sk: rest.sk },
        UpdateExpression: "SET #slot = :point",
        ExpressionAttributeNames: { "#slot": "s2" },
        ExpressionAttributeValues: { ":point": slot.s1 },
      }),
    );
    expect(filledRingSize(meter.itemsUnder("LATENCY#")[0]!, 120)).toBe(itemSize(rest) + 120 * itemSize(slot));
  });
});

describe("usage", () => {
  it("adds, subtracts (never below zero) and picks lines", () => {
    const a = emptyUsage();
    addMetered(a, { line: "DynamoDB.GetItem", readUnits: 1, writeUnits: 0, wireBytes: 10 });
    addMetered(a, { line: "DynamoDB.Query (change feed)", readUnits: 0.5, writeUnits: 0, wireBytes: 5 });
    const b = emptyUsage();
    addMetered(b, { line: "DynamoDB.GetItem", readUnits: 1, writeUnits: 0, wireBytes: 10 });
    addMetered(b, { line: "DynamoDB.GetItem", readUnits: 1, writeUnits: 0, wireBytes: 10 });
    expect(minus(a, b).lines["DynamoDB.GetItem"]).toEqual({
      requests: 0,
      readUnits: 0,
      writeUnits: 0,
      wireBytes: 0,
    });
    expect(Object.keys(without(a, "change feed").lines)).toEqual(["DynamoDB.GetItem"]);
    expect(unitsOf(only(a, "DynamoDB")).read).toBe(1.5);
    expect(repriced(a, "change feed", 3).lines["DynamoDB.Query (change feed)"]?.writeUnits).toBe(3);
  });
});

describe("money", () => {
  it("prices Lambda by requests and GB-seconds of billed duration", () => {
    const { requests, duration } = lambdaDollars(1_000_000, 100, { memoryMb: 1024, arch: "arm64" }, PRICES);
    expect(requests).toBeCloseTo(0.2, 10);
    expect(duration).toBeCloseTo(1_000_000 * 0.1 * 0.0000133334, 10);
  });

  it("stretches CPU below a whole vCPU and adds the waits", () => {
    const a = { fullVcpuMemoryMb: 1769, awsLatencyMs: 5 };
    expect(billedMs(10, { memoryMb: 512, arch: "arm64" }, 2, 50, a)).toBeCloseTo(
      (10 * 1769) / 512 + 10 + 50,
      10,
    );
    expect(billedMs(10, { memoryMb: 2048, arch: "arm64" }, 0, 0, a)).toBe(10);
  });

  it("prices custom metrics in tiers, storage with backups of the table's bytes", () => {
    expect(metricsDollars(2_000, PRICES)).toBeCloseTo(600, 10);
    expect(metricsDollars(20_000, PRICES)).toBeCloseTo(3_000 + 1_000, 10);
    expect(storageDollars(1024 ** 3, 1024 ** 3, PRICES)).toBeCloseTo(2 * 0.25 + 0.2, 10);
  });

  it("names the largest line", () => {
    const lines = [
      { id: "a", what: "a", dollars: 1 },
      { id: "b", what: "b", dollars: 3 },
    ];
    expect(largest(lines).id).toBe("b");
  });
});
