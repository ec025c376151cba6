/**
 * Every record heals or can be removed through the API. Each test plants one corrupt item straight in
 * the emulator's table (as a bad restore or a hand edit would), then drives the stack from outside:
 * - a status whose generation is not a number (a string, or none): PATCH, reconnect and an import that
 *   replaces its server rewrite a valid status, at a generation above the old one (a stale job cannot be accepted), and the server connects;
 *   the sweep does the same unasked; lists, other servers' calls and the sweep are not disturbed;
 * - a catalogue whose body is damaged but whose hash is intact: it counts as absent (no tools shown)
 *   and the next probe rewrites it, so its tools list and answer calls again;
 * - a config missing a required field: listed `failed` with a sentence, any admin route but GET and
 *   DELETE answers 409 `server.config_unreadable`, and DELETE removes it and releases its name.
 */
import { gzipSync } from "node:zlib";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { changeStamp, keys } from "@mcpgw/aws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { type Stack, startStack, waitFor } from "../support/stack";
import { createServer, reaches, uniqueName } from "./helpers";

describe("records that would never heal", () => {
  let stack: Stack;
  let upstream: Upstream;

  beforeAll(async () => {
    stack = await startStack();
    upstream = await startUpstream({ name: "corrupt-upstream" });
  });
  afterAll(async () => {
    await stack?.stop();
    await upstream?.close();
  });

  /** Rewrites one stored item as `change` makes it, bypassing every repository. */
  async function plant(key: { pk: string; sk: string }, change: (item: Record<string, unknown>) => void) {
    const item = await stored(key);
    if (!item) throw new Error(`nothing stored at ${key.pk} ${key.sk}`);
    change(item);
    await stack.store.clients.ddb.send(
      new PutCommand({ TableName: stack.store.config.tableName, Item: item }),
    );
  }

  async function stored(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined> {
    const { Item } = await stack.store.clients.ddb.send(
      new GetCommand({ TableName: stack.store.config.tableName, Key: key, ConsistentRead: true }),
    );
    return Item;
  }

  const echo = (name: string) =>
    stack.call("POST", `/v1/tools/${name}__echo/call`, { arguments: { text: "hi" } });

  async function connected(): Promise<{ id: string; name: string; generation: number }> {
    const name = uniqueName("corrupt");
    const id = await createServer(stack, { name, url: upstream.url });
    await reaches(stack, id, "connected");
    const generation = Number((await stored(keys.serverStatus(id)))?.generation);
    return { id, name, generation };
  }

  type Corruption = (item: Record<string, unknown>) => void;
  const stringGeneration: Corruption = (item) => {
    item.generation = "seven";
  };
  const noGeneration: Corruption = (item) => {
    delete item.generation;
  };

  it.each([
    ["a string", stringGeneration],
    ["missing", noGeneration],
  ] as const)(
    "a status whose generation is %s: PATCH rewrites it above the old one and connects",
    async (_, corrupt) => {
      const bystander = await connected();
      const { id, generation } = await connected();
      await plant(keys.serverStatus(id), corrupt);

      // Nothing else is disturbed meanwhile: the list, the sweep, another server's calls.
      expect((await stack.call("GET", "/v1/servers?limit=100")).status).toBe(200);
      await stack.sweep();
      expect((await echo(bystander.name)).status).toBe(200);
      await plant(keys.serverStatus(id), corrupt); // the sweep may have healed it: again

      const patched = await stack.call("PATCH", `/v1/servers/${id}`, { timeoutSeconds: 20 });
      expect(patched.status).toBe(200);
      await reaches(stack, id, "connected");
      const healed = Number((await stored(keys.serverStatus(id)))?.generation);
      expect(healed).toBeGreaterThan(generation + 1);
    },
  );

  it("a status whose generation is a string: reconnect rewrites it and connects", async () => {
    const { id, generation } = await connected();
    await plant(keys.serverStatus(id), stringGeneration);

    const reconnected = await stack.call("POST", `/v1/servers/${id}/reconnect`);
    expect(reconnected.status).toBe(202);
    expect(reconnected.body.status.state).toBe("connecting");
    await reaches(stack, id, "connected");
    expect(Number((await stored(keys.serverStatus(id)))?.generation)).toBeGreaterThan(generation + 1);
  });

  it("a status whose generation is a string: an import replacing its server rewrites it and connects", async () => {
    const { id, name, generation } = await connected();
    await plant(keys.serverStatus(id), stringGeneration);

    const document = { mcpServers: { [name]: { type: "http", url: upstream.url } } };
    const imported = await stack.call("POST", "/v1/servers/import?onConflict=replace", document);
    expect(imported.status).toBe(201);
    await reaches(stack, id, "connected");
    expect(Number((await stored(keys.serverStatus(id)))?.generation)).toBeGreaterThan(generation + 1);
  });

  it("a status with garbage fields: the sweep rewrites it unasked and the server connects", async () => {
    const { id, name, generation } = await connected();
    await plant(keys.serverStatus(id), (item) => Object.assign(item, { generation: "seven", state: 42 }));
    // Hidden from clients meanwhile, not shown half-read.
    expect((await stack.call("GET", `/v1/servers/${id}`)).body.status.state).not.toBe(42);

    await stack.sweep();
    await reaches(stack, id, "connected");
    const item = await stored(keys.serverStatus(id));
    expect(item?.generation).toEqual(expect.any(Number));
    expect(Number(item?.generation)).toBeGreaterThan(generation);
    await waitFor(
      async () => (await echo(name)).status,
      (status) => status === 200,
    );
  });

  it.each([
    ["not gzip at all", Buffer.from("garbage, not a catalogue")],
    ["another body under the old hash", gzipSync(JSON.stringify({ tools: [] }))],
  ])("a catalogue whose body is %s: shown absent, rewritten at once, unasked", async (_, body) => {
    const { id, name } = await connected();
    expect((await echo(name)).status).toBe(200);
    await plant(keys.serverCatalog(id), (item) => {
      item.tools = new Uint8Array(body);
      Object.assign(item, changeStamp()); // the data plane reads it again (as after a restart)
    });

    // No sweep, no edit: the data plane that meets the damage (calls go on meanwhile) asks for the
    // tools to be listed again, within seconds — not at the next listing, up to 10 minutes away.
    await waitFor(
      async () => (await echo(name)).status,
      (status) => status === 200,
      { timeoutMs: 10_000 },
    );
    const tools = await waitFor(
      async () => (await stack.call("GET", `/v1/servers/${id}/tools`)).body,
      (listed) => Array.isArray(listed?.tools) && listed.tools.length === 4,
      { timeoutMs: 10_000 },
    );
    expect(tools.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      "add",
      "echo",
      "fail",
      "slow",
    ]);
  });

  it.each([
    ["name", /name missing/],
    ["version", /version missing/],
    ["id", /id missing/],
  ])("a config without %s: listed failed with a sentence, refused clearly, deletable", async (field, why) => {
    const bystander = await connected();
    const { id, name } = await connected();
    await plant(keys.serverConfig(id), (item) => {
      delete item[field];
    });

    const list = await stack.call("GET", "/v1/servers?limit=100");
    expect(list.status).toBe(200);
    const listed = list.body.servers.find((server: { id: string }) => server.id === id);
    expect(listed).toMatchObject({ id, enabled: false, status: { state: "failed", toolCount: 0 } });
    expect(listed.status.error).toMatch(why);
    expect(listed.status.error).toMatch(
      /the stored config is unreadable: .*; delete the server and create it again/,
    );
    expect(listed.status.lastError).toBe(listed.status.error);
    const read = await stack.call("GET", `/v1/servers/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.status.error).toBe(listed.status.error);

    for (const [method, path, body] of [
      ["PATCH", `/v1/servers/${id}`, { name: uniqueName("renamed") }],
      ["POST", `/v1/servers/${id}/reconnect`, undefined],
      ["GET", `/v1/servers/${id}/tools`, undefined],
    ] as const) {
      const refused = await stack.call(method, path, body);
      expect(refused.status, `${method} ${path}`).toBe(409);
      expect(refused.body.code).toBe("server.config_unreadable");
      expect(refused.body.detail).toMatch(why);
    }
    // The data plane and the sweep go on around it.
    await stack.sweep();
    expect((await echo(bystander.name)).status).toBe(200);

    expect((await stack.call("DELETE", `/v1/servers/${id}`)).status).toBe(204);
    expect((await stack.call("GET", `/v1/servers/${id}`)).status).toBe(404);
    expect(await stored(keys.nameClaim(name))).toBeUndefined();
    // Its name is free again.
    expect((await stack.call("POST", "/v1/servers", { name, url: upstream.url })).status).toBe(201);
  });
});
