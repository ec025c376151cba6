import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { DescribeKeyCommand } from "@aws-sdk/client-kms";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import {
  checkResources,
  createAwsClients,
  createStore,
  ensureResources,
  MAX_RECEIVE_COUNT,
  recreateWhenMissing,
} from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { describe, expect, it } from "vitest";
import { createTestConfig, removeResource } from "../support/aws";
import { waitFor } from "../support/stack";

describe("resource bootstrap", () => {
  it("is idempotent and creates the table, index, queue with redrive, and the key alias", async () => {
    const config = await createTestConfig({ keyAlias: `alias/test-${Date.now()}`, keyId: "unused" });
    const clients = createAwsClients(config);

    await ensureResources(clients, config);
    await ensureResources(clients, config);

    const table = await clients.ddb.send(new DescribeTableCommand({ TableName: config.tableName }));
    expect(table.Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual([
      "byKind",
      "byChange",
    ]);
    const { QueueUrl } = await clients.sqs.send(new GetQueueUrlCommand({ QueueName: config.queueName }));
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["RedrivePolicy"] }),
    );
    const redrive = JSON.parse(attributes.Attributes?.RedrivePolicy ?? "{}");
    expect(redrive.deadLetterTargetArn).toContain(config.deadLetterQueueName);
    expect(Number(redrive.maxReceiveCount)).toBe(MAX_RECEIVE_COUNT);
    const key = await clients.kms.send(new DescribeKeyCommand({ KeyId: config.keyAlias }));
    expect(key.KeyMetadata?.Enabled).toBe(true);
  });
});

describe("re-creating missing local resources (npm run dev)", () => {
  it("runs the bootstrap again when a call finds a resource missing, once per gap, then calls back", async () => {
    // Prepare: a store whose table and queue are gone, as on an emulator that came back empty
    const config = await createTestConfig();
    const store = createStore(config);
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ sink: (line) => lines.push(JSON.parse(line)) });
    let recreated = 0;
    const stop = recreateWhenMissing(store, logger, { onRecreated: () => recreated++, gapMs: 60_000 });
    await Promise.all([removeResource(config, "table"), removeResource(config, "queue")]);

    // Act: calls fail on the missing table and queue, and report it
    const failures = await Promise.allSettled([
      store.servers.listPlain(),
      store.statuses.list(),
      store.jobs.send({ type: "probe", serverId: "s", generation: 1 }),
    ]);
    for (const failure of failures) {
      if (failure.status === "rejected") store.outages.report(logger, failure.reason);
    }

    // Assess: one run, and everything answers again
    await waitFor(
      async () => recreated,
      (count) => count === 1,
      { timeoutMs: 10_000 },
    );
    stop();
    expect(failures.every((f) => f.status === "rejected")).toBe(true);
    expect(await checkResources(store)).toEqual({ table: "ok", queue: "ok", key: "ok" });
    expect(await store.servers.listPlain()).toEqual([]);
    await store.jobs.send({ type: "probe", serverId: "s", generation: 1 });
    expect(lines.filter((l) => l.msg === "re-creating the local resources")).toHaveLength(1);
    expect(lines.filter((l) => l.msg === "local resources re-created")).toHaveLength(1);
  });
});
