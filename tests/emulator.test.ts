import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import {
  CreateTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  ScanCommand,
} from "@aws-sdk/client-dynamodb";
import { CreateKeyCommand, DecryptCommand, EncryptCommand, KMSClient } from "@aws-sdk/client-kms";
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { afterEach, describe, expect, it } from "vitest";
import {
  type Emulator,
  generateEmulatorCredentials,
  startEmulator,
  startMoto,
} from "../scripts/lib/emulator";
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
  const AWS_VARS = ["AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] as const;
  const saved = AWS_VARS.map((name) => [name, process.env[name]] as const);
  afterEach(() => {
    for (const [name, value] of saved) process.env[name] = value;
  });

  it("adopts AWS_ENDPOINT_URL instead of starting anything", async () => {
    process.env.AWS_ENDPOINT_URL = "http://127.0.0.1:4566";

    const emulator = await startEmulator();

    expect(emulator).toMatchObject({ endpoint: "http://127.0.0.1:4566", owned: false, pid: undefined });
  });

  it("starts moto on a free loopback port, with a fresh key of its own in process.env, and stops it", async () => {
    delete process.env.AWS_ENDPOINT_URL;

    const emulator = await startEmulator();
    const listed = await new DynamoDBClient({ endpoint: emulator.endpoint }).send(new ListTablesCommand({}));
    // The key went to moto on its stdin: not in its argv (world-readable) nor its environment.
    const exposed = ["cmdline", "environ"].map((file) =>
      readFileSync(`/proc/${emulator.pid}/${file}`, "utf8"),
    );
    await emulator.stop();

    expect(emulator.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(process.env.AWS_ENDPOINT_URL).toBe(emulator.endpoint);
    expect(process.env.AWS_ACCESS_KEY_ID).toBe(emulator.credentials?.accessKeyId);
    expect(process.env.AWS_SECRET_ACCESS_KEY).toBe(emulator.credentials?.secretAccessKey);
    expect(emulator.credentials?.secretAccessKey).toMatch(/^[\w-]{40}$/);
    expect(listed.TableNames).toEqual([]);
    for (const text of exposed) expect(text).not.toContain(emulator.credentials?.secretAccessKey);
    expect(alive(emulator.pid!)).toBe(false);
  });

  it("serves only requests signed with its key; other keys, other services and moto's own API get 403", async () => {
    // Prepare: a moto requiring a key; a table, a queue and a KMS ciphertext made with that key
    const credentials = generateEmulatorCredentials();
    const moto = await startMoto({ credentials });
    const client = <T>(
      Client: new (config: object) => T,
      keys?: { accessKeyId: string; secretAccessKey: string },
    ) =>
      new Client({
        endpoint: moto.endpoint,
        region: "us-east-1",
        credentials: keys ?? credentials,
        maxAttempts: 1,
      });
    try {
      await client(DynamoDBClient).send(
        new CreateTableCommand({
          TableName: "t",
          BillingMode: "PAY_PER_REQUEST",
          AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
          KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        }),
      );
      const queue = await client(SQSClient).send(new CreateQueueCommand({ QueueName: "q" }));
      const key = await client(KMSClient).send(new CreateKeyCommand({}));
      const sealed = await client(KMSClient).send(
        new EncryptCommand({ KeyId: key.KeyMetadata?.KeyId, Plaintext: Buffer.from("the secret") }),
      );
      const others = [
        { accessKeyId: credentials.accessKeyId, secretAccessKey: "not-the-secret" },
        { accessKeyId: "AKIAMADEUP0000000000", secretAccessKey: "made-up" },
        { accessKeyId: "testing", secretAccessKey: "testing" },
        { accessKeyId: "test", secretAccessKey: "test" },
      ];

      // Act: every other key tries the table, the queue and the key; unsigned requests try moto's API
      const outcome = (call: Promise<unknown>) =>
        call.then(
          () => "served",
          (error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode,
        );
      const attempts = await Promise.all(
        others.flatMap((keys) => [
          outcome(client(DynamoDBClient, keys).send(new ScanCommand({ TableName: "t" }))),
          outcome(client(SQSClient, keys).send(new ReceiveMessageCommand({ QueueUrl: queue.QueueUrl }))),
          outcome(
            client(KMSClient, keys).send(new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob })),
          ),
        ]),
      );
      const unsigned = await Promise.all(
        [
          ["POST", "/moto-api/reset-auth", "inf"],
          ["GET", "/moto-api/data.json"],
          ["POST", "/moto-api/reset"],
          ["GET", "/latest/meta-data/iam/security-credentials/"],
        ].map(
          async ([method, path, body]) => (await fetch(`${moto.endpoint}${path}`, { method, body })).status,
        ),
      );
      const unsignedScan = await fetch(moto.endpoint, {
        method: "POST",
        headers: { "x-amz-target": "DynamoDB_20120810.Scan", "content-type": "application/x-amz-json-1.0" },
        body: JSON.stringify({ TableName: "t" }),
      });
      const lambda = await fetch(`${moto.endpoint}/2015-03-31/functions/`, {
        headers: {
          authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/20260101/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=00`,
        },
      });
      const decrypted = await client(KMSClient).send(
        new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob }),
      );

      // Assess: refused, all of it; the key's holder still decrypts (the reset-auth attempt changed nothing)
      expect(attempts).toEqual(Array(attempts.length).fill(403));
      expect(unsigned).toEqual([403, 403, 403, 403]);
      expect(unsignedScan.status).toBe(403);
      expect(lambda.status).toBe(403);
      expect(Buffer.from(decrypted.Plaintext ?? []).toString()).toBe("the secret");
    } finally {
      await moto.stop();
    }
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

  it("with a data dir, its snapshot of every few seconds brings back DynamoDB, SQS and KMS after a SIGKILL", async () => {
    // Prepare: a moto keeping its state in a fresh data dir; an item, a message and a KMS ciphertext
    const dataDir = join(mkdtempSync(join(tmpdir(), "moto-data-")), "data");
    const snapshot = join(dataDir, "emulator.snapshot");
    const client = <T>(Client: new (config: object) => T, moto: Emulator) =>
      new Client({
        endpoint: moto.endpoint,
        region: "us-east-1",
        credentials: moto.credentials,
        maxAttempts: 1,
      });
    const first = await startMoto({ credentials: generateEmulatorCredentials(), dataDir });
    let second: Emulator | undefined;
    try {
      await client(DynamoDBClient, first).send(
        new CreateTableCommand({
          TableName: "kept",
          BillingMode: "PAY_PER_REQUEST",
          AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
          KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        }),
      );
      await client(DynamoDBClient, first).send(
        new PutItemCommand({ TableName: "kept", Item: { pk: { S: "item" } } }),
      );
      const queue = await client(SQSClient, first).send(new CreateQueueCommand({ QueueName: "kept" }));
      await client(SQSClient, first).send(
        new SendMessageCommand({ QueueUrl: queue.QueueUrl, MessageBody: "job" }),
      );
      const key = await client(KMSClient, first).send(new CreateKeyCommand({}));
      const sealed = await client(KMSClient, first).send(
        new EncryptCommand({ KeyId: key.KeyMetadata?.KeyId, Plaintext: Buffer.from("sealed") }),
      );
      const written = Date.now();
      await waitFor(
        async () => (existsSync(snapshot) ? statSync(snapshot).mtimeMs : 0),
        (mtime) => mtime >= written,
        { timeoutMs: 15_000 },
      );

      // Act: a hard stop (no last snapshot), then a moto with another key on the same dir
      process.kill(first.pid, "SIGKILL");
      await waitFor(
        async () => alive(first.pid),
        (isAlive) => !isAlive,
        { timeoutMs: 10_000 },
      );
      second = await startMoto({ credentials: generateEmulatorCredentials(), dataDir });

      // Assess: all three are back; the snapshot is private
      const items = await client(DynamoDBClient, second).send(new ScanCommand({ TableName: "kept" }));
      expect(items.Items).toEqual([{ pk: { S: "item" } }]);
      const received = await client(SQSClient, second).send(
        new ReceiveMessageCommand({ QueueUrl: queue.QueueUrl }),
      );
      expect(received.Messages?.map((message) => message.Body)).toEqual(["job"]);
      const opened = await client(KMSClient, second).send(
        new DecryptCommand({ CiphertextBlob: sealed.CiphertextBlob }),
      );
      expect(Buffer.from(opened.Plaintext ?? []).toString()).toBe("sealed");
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(snapshot).mode & 0o777).toBe(0o600);
    } finally {
      await first.stop();
      await second?.stop();
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
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
