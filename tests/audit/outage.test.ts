/**
 * The audit trail never fails a call: while its writes fail (a fault on the real DynamoDB client's
 * audit batch writes), calls still succeed and `/readyz` is 200 with `degraded: true` and
 * `checks.audit` naming the failure; once writes go through again it is not degraded. Items carry
 * `expiresAt` = their end + AUDIT_RETENTION_DAYS.
 */
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { auditDay, auditPartition } from "@mcpgw/aws";
import type { AuditEvent } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { injectFault } from "../support/faults";
import { createServer, reaches, uniqueName } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

const RETENTION_DAYS = 7;

describe("the audit trail's outages and retention", () => {
  let stack: Stack;
  let upstream: Upstream;
  const name = uniqueName("echoes");

  beforeAll(async () => {
    stack = await startStack({ audit: { flushMs: 50, attempts: 2, retentionDays: RETENTION_DAYS } });
    upstream = await startUpstream({ name });
    const id = await createServer(stack, { name, url: upstream.url });
    await reaches(stack, id, "connected");
    await waitFor(
      () => stack.call("POST", `/v1/tools/${name}__echo/call`, { arguments: { text: "warm" } }),
      (r) => r.status === 200,
      { timeoutMs: 10_000 },
    );
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  const readyz = async () => {
    const response = await fetch(`${stack.api.url}/readyz`);
    // biome-ignore lint/suspicious/noExplicitAny: read loosely, as tests do
    return { status: response.status, body: (await response.json()) as any };
  };

  it("failing audit writes fail no call; /readyz is 200 and degraded until they go through again", async () => {
    const fault = injectFault(
      stack.store.clients.ddb,
      (command, input) => command === "BatchWriteItemCommand" && JSON.stringify(input).includes('"AUDIT#'),
    );
    try {
      const during = await stack.call("POST", `/v1/tools/${name}__echo/call`, {
        arguments: { text: "lost" },
      });
      expect(during.status).toBe(200);
      await stack.audit.flush();
      expect(fault.hits).toBeGreaterThan(0);
      const degraded = await waitFor(readyz, (r) => r.body.degraded === true, { timeoutMs: 5_000 });
      expect(degraded).toMatchObject({ status: 200, body: { ok: true, checks: { audit: "error" } } });
      expect(stack.audit.status()).toMatchObject({ state: "error", failed: expect.any(Number) });
      expect(stack.audit.status().failed).toBeGreaterThan(0);
      expect(stack.logs.some((line) => line.includes("audit events not written"))).toBe(true);
    } finally {
      fault.remove();
    }

    const after = await stack.call("POST", `/v1/tools/${name}__echo/call`, { arguments: { text: "kept" } });
    expect(after.status).toBe(200);
    await stack.audit.flush();
    const recovered = await waitFor(readyz, (r) => r.body.degraded === false, { timeoutMs: 5_000 });
    expect(recovered).toMatchObject({ status: 200, body: { ok: true, checks: { audit: "ok" } } });
  });

  it("an item expires AUDIT_RETENTION_DAYS after its call ended", async () => {
    const before = Date.now();
    expect(
      (await stack.call("POST", `/v1/tools/${name}__echo/call`, { arguments: { text: "x" } })).status,
    ).toBe(200);
    await stack.audit.flush();
    const listed = await stack.call("GET", `/v1/audit?server=${name}&limit=1`);
    const event = listed.body.events[0] as AuditEvent;
    expect(Date.parse(event.at)).toBeGreaterThanOrEqual(before - 5);
    const { Items = [] } = await stack.store.clients.ddb.send(
      new QueryCommand({
        TableName: stack.store.config.tableName,
        KeyConditionExpression: "pk = :pk AND sk = :sk",
        ExpressionAttributeValues: { ":pk": auditPartition(auditDay(Date.parse(event.at))), ":sk": event.id },
      }),
    );
    const expected = Date.parse(event.at) / 1000 + RETENTION_DAYS * 86_400;
    expect(Items).toHaveLength(1);
    expect(Math.abs(Number(Items[0]?.expiresAt) - expected)).toBeLessThanOrEqual(2);
  });
});
