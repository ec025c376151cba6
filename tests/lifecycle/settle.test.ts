/**
 * Faults settle right. Each test injects a fault into the real stack, then asserts the settled state:
 * - an edit whose write fails leaves the stored server exactly as it was and tells the caller (503,
 *   retry); with the fault gone, the same edit succeeds and the server settles;
 * - a job lost after an edit committed (the queue send failed) is repaired by the sweep, unasked;
 * - a sealed value that cannot be opened stays with its server: the list shows it `failed`, it can be
 *   read, repaired by an edit that sends its secrets again, and deleted; the others are untouched;
 * - a disable racing reconnects always ends `disabled`;
 * - a 3,000-tool catalogue too large for one item is stored in parts and served whole;
 * - an upstream that answers with something other than JSON-RPC fails with a sentence, not a dump;
 * - a server that just connected is callable at once (no stale-view 404).
 */
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GetQueueAttributesCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { type PlainServer, parseServerSpec, type ServerSpec } from "@mcpgw/core";
import { startSweeper } from "@mcpgw/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createTestApp, TEST_ADMIN_TOKEN } from "../support/app";
import { scanTable } from "../support/aws";
import { injectFault } from "../support/faults";
import { createServer, reaches, statusReader, uniqueName } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not typed
type Json = any;

const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** True for a DynamoDB transaction that writes a server's status (what every admin change does). */
const statusTransaction = (command: string, input: unknown) =>
  command === "TransactWriteItemsCommand" && JSON.stringify(input).includes('"STATUS"');

describe("faults settle right", () => {
  let stack: Stack;
  let upstream: Upstream;

  beforeAll(async () => {
    stack = await startStack();
    upstream = await startUpstream({ name: "settle-upstream" });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  it.each([
    ["disable", { enabled: false }, "disabled"],
    ["URL change", { url: "http://127.0.0.1:9/mcp" }, "failed"],
  ] as const)(
    "an edit whose write fails (%s): unchanged and told; without the fault it settles",
    async (_, patch, settles) => {
      const id = await createServer(stack, { name: uniqueName("edit"), url: upstream.url });
      await reaches(stack, id, "connected");
      const before = await stack.call("GET", `/v1/servers/${id}`);
      const fault = injectFault(stack.store.clients.ddb, statusTransaction);

      const refused = await stack.call("PATCH", `/v1/servers/${id}`, patch);
      fault.remove();

      expect(fault.hits).toBe(1);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: "store.unavailable" });
      expect(refused.body.detail).toMatch(/nothing changed\. Try again\./);
      const after = await stack.call("GET", `/v1/servers/${id}`);
      expect(after.body).toEqual(before.body);

      const retried = await stack.call("PATCH", `/v1/servers/${id}`, patch);
      expect(retried.status).toBe(200);
      expect((await reaches(stack, id, settles, 20_000)).state).toBe(settles);
    },
  );

  it("an enable whose write fails stays disabled; without the fault it connects", async () => {
    const id = await createServer(stack, { name: uniqueName("enable"), url: upstream.url, enabled: false });
    const fault = injectFault(stack.store.clients.ddb, statusTransaction);

    const refused = await stack.call("PATCH", `/v1/servers/${id}`, { enabled: true });
    fault.remove();

    expect(refused.status).toBe(503);
    const after = await stack.call("GET", `/v1/servers/${id}`);
    expect(after.body).toMatchObject({ enabled: false, version: 1, status: { state: "disabled" } });
    expect((await stack.call("PATCH", `/v1/servers/${id}`, { enabled: true })).status).toBe(200);
    await reaches(stack, id, "connected");
  });

  it("a job lost after the edit committed (queue send failed): the sweep repairs it, unasked", async () => {
    const id = await createServer(stack, { name: uniqueName("lostjob"), url: upstream.url, enabled: false });
    const sweeper = startSweeper({ store: stack.store, logger: stack.logger }, 2);
    try {
      const fault = injectFault(stack.store.clients.sqs, (command) => command === "SendMessageCommand");
      const edited = await stack.call("PATCH", `/v1/servers/${id}`, { enabled: true });
      fault.remove();

      expect(fault.hits).toBe(1);
      expect(edited.status).toBe(200);
      expect(edited.body.status.state).toBe("connecting");
      // One sweep interval (2 s here) after the job's grace (one whole attempt: 20 s), connected with
      // no admin action.
      const settled = await reaches(stack, id, "connected", 30_000);
      expect(settled.lastSuccessfulConnectionAt).not.toBeNull();
    } finally {
      sweeper.stop();
    }
  }, 40_000);

  it("a sealed value that cannot be opened stays with its server: listed, readable, repairable, deletable", async () => {
    const names = [uniqueName("sealed-a"), uniqueName("sealed-b"), uniqueName("sealed-c")];
    const ids = await Promise.all(
      names.map((name) =>
        createServer(stack, { name, url: upstream.url, headers: { Authorization: `Bearer token-${name}` } }),
      ),
    );
    await Promise.all(ids.map((id) => reaches(stack, id, "connected")));
    const [tampered, ...others] = ids as [string, string, string];
    const othersBefore = await Promise.all(others.map((id) => stack.call("GET", `/v1/servers/${id}`)));
    // Flip the ciphertext of one server's sealed headers, as a bad restore or a tamperer would.
    const { ddb } = stack.store.clients;
    const { GetCommand, PutCommand } = await import("@aws-sdk/lib-dynamodb");
    const key = { pk: `SERVER#${tampered}`, sk: "CONFIG" };
    const { Item } = await ddb.send(new GetCommand({ TableName: stack.store.config.tableName, Key: key }));
    const data = Buffer.from(String(Item?.sealedHeaders.data), "base64");
    data[0] = (data[0] ?? 0) ^ 0xff;
    await ddb.send(
      new PutCommand({
        TableName: stack.store.config.tableName,
        Item: { ...Item, sealedHeaders: { ...Item?.sealedHeaders, data: data.toString("base64") } },
      }),
    );

    const list = await stack.call("GET", "/v1/servers");
    const one = await stack.call("GET", `/v1/servers/${tampered}`);

    expect(list.status).toBe(200);
    const listed = (list.body.servers as Json[]).filter((server) => ids.includes(server.id));
    expect(listed).toHaveLength(3);
    expect(listed.find((server) => server.id === tampered).status).toMatchObject({
      state: "failed",
      reason: "failed",
      lastError: "stored secrets cannot be opened",
    });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      name: names[0],
      url: upstream.url,
      headers: { Authorization: "Bearer [SECRET]" },
    });
    // Its probe says the same (the worker cannot open it either).
    expect((await stack.call("POST", `/v1/servers/${tampered}/reconnect`)).status).toBe(202);
    await waitFor(statusReader(stack, tampered), (s) => s.lastError === "stored secrets cannot be opened");

    // An edit that keeps the secret by its mask cannot; one that sends it again repairs the server.
    const keeping = await stack.call("PATCH", `/v1/servers/${tampered}`, {
      headers: { Authorization: "Bearer [SECRET]" },
    });
    expect(keeping.status).toBe(409);
    expect(keeping.body.code).toBe("server.secrets_unreadable");
    const repaired = await stack.call("PATCH", `/v1/servers/${tampered}`, {
      headers: { Authorization: "Bearer a-new-token" },
    });
    expect(repaired.status).toBe(200);
    expect(repaired.body.status.state).toBe("connecting");
    await reaches(stack, tampered, "connected");
    expect((await stack.call("DELETE", `/v1/servers/${tampered}`)).status).toBe(204);

    const othersAfter = await Promise.all(others.map((id) => stack.call("GET", `/v1/servers/${id}`)));
    expect(othersAfter.map((r) => r.body.version)).toEqual(othersBefore.map((r) => r.body.version));
    expect(othersAfter.map((r) => r.body.status.state)).toEqual(["connected", "connected"]);
  });

  it("3,000 tools too large for one item: stored in parts, connected, every tool served", async () => {
    const big = await startUpstream({ name: "big", extraTools: 3_000, extraToolDescriptionBytes: 200 });
    try {
      const name = uniqueName("big");
      const id = await createServer(stack, { name, url: big.url });

      const settled = await waitFor(statusReader(stack, id), (s) => s.state !== "connecting", {
        timeoutMs: 30_000,
      });

      expect(settled.state).toBe("connected");
      expect(settled.toolCount).toBe(3_004);
      const items = await scanTable(stack.store.config);
      const parts = items.filter(
        (item) => item.pk === `SERVER#${id}` && String(item.sk).startsWith("CATALOG"),
      );
      expect(parts.length).toBeGreaterThan(1);
      const tools = await waitFor(
        async () =>
          ((await stack.call("GET", "/v1/tools")).body.tools as Json[]).filter((t) => t.server === name),
        (found) => found.length === 3_004,
      );
      expect(tools).toHaveLength(3_004);
      // Nothing went to the dead-letter queue on the way.
      const dlq = await stack.store.clients.sqs.send(
        new GetQueueUrlCommand({ QueueName: stack.store.config.deadLetterQueueName }),
      );
      const dead = await stack.store.clients.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: dlq.QueueUrl,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      );
      expect(dead.Attributes?.ApproximateNumberOfMessages).toBe("0");
    } finally {
      await big.close();
    }
  }, 60_000);

  it("an upstream answering with JSON that is not JSON-RPC fails with a sentence, not a dump", async () => {
    const junk: Server = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () =>
        res.writeHead(200, { "content-type": "application/json" }).end('{"hello":"world"}'),
      );
    });
    await new Promise<void>((resolve) => junk.listen(0, "127.0.0.1", () => resolve()));
    try {
      const { port } = junk.address() as AddressInfo;
      const id = await createServer(stack, { name: uniqueName("junk"), url: `http://127.0.0.1:${port}/mcp` });

      const failed = await reaches(stack, id, "failed");

      expect(failed.lastError).toBe(
        "the server's reply is not a JSON-RPC message (is this URL an MCP endpoint?)",
      );
    } finally {
      junk.closeAllConnections();
      await new Promise((resolve) => junk.close(resolve));
    }
  });

  it("a server that just connected is callable at once: no 404 from a stale view", async () => {
    const results: number[] = [];
    for (let round = 0; round < 5; round++) {
      await stack.call("GET", "/v1/tools"); // the data plane's view is fresh and cached now
      const name = uniqueName("fresh");
      const id = await createServer(stack, { name, url: upstream.url });
      await reaches(stack, id, "connected");
      results.push(
        (await stack.call("POST", `/v1/tools/${name}__echo/call`, { arguments: { text: "hi" } })).status,
      );
    }
    expect(results).toEqual([200, 200, 200, 200, 200]);
  });
});

describe("a disable racing reconnects", () => {
  /** The state of one round: what the config says and what the status says. */
  async function settledState(store: Awaited<ReturnType<typeof createTestApp>>["store"], id: string) {
    const [config, status] = await Promise.all([store.servers.getPlain(id), store.statuses.get(id)]);
    return `${config?.enabled ? "enabled" : "disabled"}/${status?.state}`;
  }

  it("200 rounds of one disable racing 60 reconnects (the store's writes as the API issues them): all disabled", async () => {
    const { store } = await createTestApp();
    const server = await store.servers.create(
      parseServerSpec({ name: uniqueName("race"), url: "http://127.0.0.1:9/mcp", enabled: false }),
    );
    const outcomes: string[] = [];
    const started = performance.now();
    for (let round = 0; round < 200; round++) {
      const current = (await store.servers.getPlain(server.id)) as PlainServer;
      const enabled = await store.servers.update(
        current,
        { ...specOf(current), enabled: true },
        { keepSealed: true },
      );
      // 60 admins who loaded the enabled server reconnect it while one disables it.
      const reconnects = Array.from({ length: 60 }, () =>
        store.servers.reconnect(server.id, enabled.version).then(
          () => "reconnected",
          (error: { code?: string }) => error.code ?? "error",
        ),
      );
      const disable = store.servers.update(
        enabled,
        { ...specOf(current), enabled: false },
        { keepSealed: true },
      );
      const [results] = await Promise.all([Promise.all(reconnects), disable]);
      expect(new Set(results).size).toBeGreaterThan(0);
      expect(results.every((r) => r === "reconnected" || r === "server.version_conflict")).toBe(true);
      outcomes.push(await settledState(store, server.id));
    }
    console.log(
      `[settle] 200 rounds of a disable racing 60 reconnects in ${Math.round(performance.now() - started)} ms`,
    );
    expect(outcomes.filter((state) => state !== "disabled/disabled")).toEqual([]);
  }, 300_000);

  it("through the admin API too: a disable racing 60 reconnects ends disabled, round after round", async () => {
    const { app, call, store } = await createTestApp();
    const created = await call("POST", "/v1/servers", {
      name: uniqueName("race-api"),
      url: "http://127.0.0.1:9/mcp",
      enabled: false,
    });
    const id = ((await created.json()) as Json).id as string;
    const outcomes: string[] = [];
    for (let round = 0; round < 10; round++) {
      expect((await call("PATCH", `/v1/servers/${id}`, { enabled: true })).status).toBe(200);
      const reconnects = Array.from({ length: 60 }, () =>
        app.request(`/v1/servers/${id}/reconnect`, { method: "POST", headers: ADMIN }),
      );
      const settled = await Promise.all([
        call("PATCH", `/v1/servers/${id}`, { enabled: false }),
        ...reconnects,
      ]);
      expect(settled[0]?.status).toBe(200);
      for (const response of settled.slice(1)) expect([202, 409]).toContain(response.status);
      outcomes.push(await settledState(store, id));
    }
    expect(outcomes.filter((state) => state !== "disabled/disabled")).toEqual([]);
  }, 120_000);
});

/** The spec part of a plain server (its masked map stands in for the secrets it keeps sealed). */
function specOf(server: PlainServer): ServerSpec {
  const { id: _i, version: _v, createdAt: _c, updatedAt: _u, masked, sealIntact: _s, ...spec } = server;
  return {
    ...spec,
    ...(spec.transport === "http" ? { headers: masked ?? {} } : { env: masked ?? {} }),
  } as ServerSpec;
}

describe("corruption stays with its record: secrets and client keys", () => {
  it("a secret whose sealed value cannot be opened is listed, replaced and deleted; the others untouched", async () => {
    const { call, store } = await createTestApp();
    for (const name of ["sec-a", "sec-b"])
      expect((await call("PUT", `/v1/secrets/${name}`, { values: { K: name } })).status).toBe(200);
    const { GetCommand, PutCommand } = await import("@aws-sdk/lib-dynamodb");
    const TableName = store.config.tableName;
    const { Item } = await store.clients.ddb.send(
      new GetCommand({ TableName, Key: { pk: "SECRET#sec-a", sk: "SECRET" } }),
    );
    await store.clients.ddb.send(
      new PutCommand({ TableName, Item: { ...Item, sealed: { ...Item?.sealed, tag: "AAAA" } } }),
    );

    const listed = await call("GET", "/v1/secrets");
    const replaced = await call("PUT", "/v1/secrets/sec-a", { values: { K: "again" } });

    expect(listed.status).toBe(200);
    expect(((await listed.json()) as Json).secrets.map((s: Json) => s.name)).toEqual(
      expect.arrayContaining(["sec-a", "sec-b"]),
    );
    expect(replaced.status).toBe(200);
    expect(await store.secrets.get("sec-a")).toEqual({ K: "again" });
    expect(await store.secrets.get("sec-b")).toEqual({ K: "sec-b" });
    expect((await call("DELETE", "/v1/secrets/sec-a")).status).toBe(204);
  });

  it("a client key item with a damaged scope is listed and revocable, and scoped to nothing (never wider)", async () => {
    const { app, call, store } = await createTestApp();
    const created = (await (await call("POST", "/v1/keys", { name: "damaged" })).json()) as Json;
    const other = (await (await call("POST", "/v1/keys", { name: "fine" })).json()) as Json;
    const { QueryCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
    const TableName = store.config.tableName;
    const { Items = [] } = await store.clients.ddb.send(
      new QueryCommand({
        TableName,
        IndexName: "byKind",
        KeyConditionExpression: "kind = :k AND kindSort = :id",
        ExpressionAttributeValues: { ":k": "APIKEY", ":id": created.id },
      }),
    );
    await store.clients.ddb.send(
      new UpdateCommand({
        TableName,
        Key: { pk: Items[0]?.pk, sk: Items[0]?.sk },
        UpdateExpression: "SET serverIds = :garbage REMOVE #name",
        ExpressionAttributeNames: { "#name": "name" },
        ExpressionAttributeValues: { ":garbage": "not-a-list" },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the key index refreshes

    const listed = await call("GET", "/v1/keys");
    const tools = await app.request("/v1/tools", { headers: { authorization: `Bearer ${created.key}` } });

    expect(listed.status).toBe(200);
    expect(((await listed.json()) as Json).keys.map((k: Json) => k.id)).toEqual(
      expect.arrayContaining([created.id, other.id]),
    );
    expect(tools.status).toBe(200);
    expect(((await tools.json()) as Json).tools).toEqual([]);
    expect((await call("DELETE", `/v1/keys/${created.id}`)).status).toBe(204);
  });
});
