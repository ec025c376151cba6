import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { startEmulator, startMoto } from "../scripts/lib/emulator";
import { parkedPort } from "../scripts/lib/processes";
import { waitFor } from "./support/stack";

const ROOT = resolve(import.meta.dirname, "..");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("emulator harness", () => {
  const saved = process.env.AWS_ENDPOINT_URL;
  afterEach(() => {
    process.env.AWS_ENDPOINT_URL = saved;
  });

  it("adopts AWS_ENDPOINT_URL instead of starting anything", async () => {
    process.env.AWS_ENDPOINT_URL = "http://127.0.0.1:4566";

    const emulator = await startEmulator();

    expect(emulator).toMatchObject({ endpoint: "http://127.0.0.1:4566", owned: false, pid: undefined });
  });

  it("starts moto on a free loopback port and stops it", async () => {
    delete process.env.AWS_ENDPOINT_URL;

    const emulator = await startEmulator();
    const answered = await fetch(`${emulator.endpoint}/moto-api/data.json`);
    await emulator.stop();

    expect(emulator.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(answered.ok).toBe(true);
    expect(alive(emulator.pid!)).toBe(false);
  });

  it("starts moto on a chosen port, and an empty one there again after a stop, leaving the env alone", async () => {
    const port = await parkedPort();
    const before = process.env.AWS_ENDPOINT_URL;

    const first = await startMoto({ port });
    const created = await fetch(`${first.endpoint}/?Action=CreateQueue&QueueName=left-behind`);
    await first.stop();
    const second = await startMoto({ port });
    const listed = await (await fetch(`${second.endpoint}/?Action=ListQueues`)).text();
    await second.stop();

    expect(first.endpoint).toBe(`http://127.0.0.1:${port}`);
    expect(second.endpoint).toBe(first.endpoint);
    expect(created.ok).toBe(true);
    expect(listed).not.toContain("left-behind");
    expect(process.env.AWS_ENDPOINT_URL).toBe(before);
  });

  it("leaves no orphan when its parent is killed with SIGKILL", async () => {
    const script = `import { startEmulator } from "./scripts/lib/emulator.ts";
      delete process.env.AWS_ENDPOINT_URL;
      const e = await startEmulator();
      console.log("pid " + e.pid);
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const pid = await new Promise<number>((done, fail) => {
      const timer = setTimeout(() => fail(new Error("no pid line within 30 s")), 30_000);
      createInterface({ input: parent.stdout! }).on("line", (line) => {
        const match = /^pid (\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          done(Number(match[1]));
        }
      });
    });
    expect(alive(pid)).toBe(true);

    parent.kill("SIGKILL");

    await waitFor(
      async () => alive(pid),
      (isAlive) => !isAlive,
      { timeoutMs: 10_000 },
    );
  });
});

describe("the emulator's DynamoDB is serializable, like DynamoDB", () => {
  it("a failing conditional transaction never undoes writes that committed meanwhile", async () => {
    // Prepare: fresh resources on the run's emulator; one item every transaction's condition fails on
    const { createTestConfig } = await import("./support/aws");
    const { createAwsClients } = await import("@mcpgw/aws");
    const { PutCommand, TransactWriteCommand, ScanCommand } = await import("@aws-sdk/lib-dynamodb");
    const config = await createTestConfig();
    const { ddb } = createAwsClients(config);
    const TableName = config.tableName;
    await ddb.send(
      new PutCommand({ TableName, Item: { pk: "GUARD", sk: "X", kind: "G", kindSort: "G", n: 1 } }),
    );

    // Act: 200 plain writes of distinct items, interleaved with 200 transactions that fail their condition
    const writes = Array.from({ length: 200 }, (_, i) =>
      ddb.send(
        new PutCommand({ TableName, Item: { pk: `ITEM#${i}`, sk: "X", kind: "I", kindSort: String(i) } }),
      ),
    );
    const failing = Array.from({ length: 200 }, (_, i) =>
      ddb
        .send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName, Item: { pk: `TX#${i}`, sk: "X", kind: "T", kindSort: String(i) } } },
              {
                Update: {
                  TableName,
                  Key: { pk: "GUARD", sk: "X" },
                  UpdateExpression: "SET n = n + :one",
                  ConditionExpression: "n = :never",
                  ExpressionAttributeValues: { ":one": 1, ":never": -1 },
                },
              },
            ],
          }),
        )
        .then(
          () => "committed",
          (error: Error) => error.name,
        ),
    );
    const outcomes = await Promise.all([...writes, ...failing]);

    // Assess: every plain write is there; no transaction's put survived; the guard untouched
    const { Items = [] } = await ddb.send(new ScanCommand({ TableName, ConsistentRead: true }));
    const keys = new Set(Items.map((item) => String(item.pk)));
    expect(outcomes.slice(200).every((outcome) => outcome === "TransactionCanceledException")).toBe(true);
    expect(Array.from({ length: 200 }, (_, i) => keys.has(`ITEM#${i}`)).every(Boolean)).toBe(true);
    expect([...keys].filter((key) => key.startsWith("TX#"))).toEqual([]);
    expect(Items.find((item) => item.pk === "GUARD")?.n).toBe(1);
  });
});
