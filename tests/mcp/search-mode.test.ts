/**
 * Search mode, from outside, over a real catalogue: every tool of server-everything (`ev`, over HTTP),
 * server-filesystem (`fs`, a stdio child of the runner) and a generated 500-tool catalogue (`suite`).
 *
 * - a real SDK client of either era on `/mcp?mode=search` lists exactly `search_tools` and `call_tool`,
 *   finds a tool and calls it through `call_tool`, with the answer a direct call gets — and, for a name
 *   it may not call or that does not exist, the error a direct call gets;
 * - past SEARCH_MODE_THRESHOLD tools (default 64) `/mcp` is in search mode by itself, a caller whose
 *   scope sees fewer gets the full list, `?mode=full` forces it; `/mcp/{server}` is full unless asked;
 * - a 2025 session keeps the mode it opened in; an invalid mode is a 400 problem+json;
 * - the top-5 hit rate over the 50 recorded tasks (catalogue-tasks.json) is at least the recorded rate.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { CATALOGUE_SERVERS, catalogueTasks, catalogueTools, hitRate } from "../fixtures/catalogue";
import { type Everything, startEverything } from "../fixtures/everything";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { createConnected, type Stack, startGatewayStack, TEST_ADMIN_TOKEN } from "../gateway/helpers";
import { filesystemEntry, testUidBase } from "../runner/helpers";
import { type ClientFlavour, connectTestClient, type TestClient } from "./clients";
import { type CreatedKey, createKey, rawRequest } from "./helpers";

/**
 * The share of the 50 recorded tasks whose tool search_tools ranks in its top 5, as measured when the
 * tasks were written down: 46 of 50. The four misses are words the tools do not use — "folder" for
 * a directory, "a meeting" for an event, "an email … don't send it yet" for a draft, "a bug report in
 * the repository" (ranked to the repository's tools). A change to the index must not lower it.
 */
const RECORDED_TOP5_RATE = 0.92;

const FLAVOURS = ["v2-modern", "v1"] as const satisfies readonly ClientFlavour[];
const { everything: EV, filesystem: FS, suite: SUITE } = CATALOGUE_SERVERS;

/** search_tools' structured answer. */
interface Found {
  tools: Array<{ name: string; description: string; inputSchema: Record<string, unknown> }>;
}

describe("search mode over server-everything, server-filesystem and a 500-tool catalogue", () => {
  let stack: Stack;
  let everything: Everything;
  let suite: Upstream;
  let evOnly: CreatedKey;
  const tempBase = mkdtempSync(join(tmpdir(), "mcpgw-search-"));
  const clients: TestClient[] = [];

  async function connect(flavour: ClientFlavour, path: string, key = TEST_ADMIN_TOKEN): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key, timeoutMs: 20_000 });
    clients.push(client);
    return client;
  }

  /** The names search_tools gives for `query` (top `limit`). */
  async function search(client: TestClient, query: string, limit = 5): Promise<Found["tools"]> {
    const { result } = await client.callTool("search_tools", { query, limit });
    if (result.isError) throw new Error(`search_tools failed: ${JSON.stringify(result.content)}`);
    return (result.structuredContent as unknown as Found).tools;
  }

  /** The error message of a call, or the result when it does not fail. */
  async function outcome(client: TestClient, name: string, args: Record<string, unknown>) {
    try {
      return { result: (await client.callTool(name, args)).result };
    } catch (error) {
      return { error: (error as Error).message };
    }
  }

  beforeAll(async () => {
    chmodSync(tempBase, 0o711); // children traverse it to reach their HOME
    const root = join(tempBase, "files");
    rmSync(root, { recursive: true, force: true });
    [stack, everything, suite] = await Promise.all([
      startGatewayStack({ runner: { tempBase, uidBase: testUidBase(), uidCount: 200 } }),
      startEverything(),
      startUpstream({ name: SUITE, catalogue: catalogueTools() }),
    ]);
    // The filesystem server's root: readable by the child's own uid.
    mkdirSync(root, { mode: 0o755 });
    writeFileSync(join(root, "hello.txt"), "hello from the catalogue\n", { mode: 0o644 });
    await Promise.all([
      createConnected(stack, { name: EV, url: everything.url }),
      createConnected(stack, { name: SUITE, url: suite.url }),
      createConnected(
        stack,
        { name: FS, command: process.execPath, args: [filesystemEntry(), root] },
        40_000,
      ),
    ]);
    evOnly = await createKey(stack, "ev only", [EV]);
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await Promise.allSettled([everything?.stop(), suite?.close()]);
    rmSync(tempBase, { recursive: true, force: true });
  });

  for (const flavour of FLAVOURS) {
    it(`${flavour} on /mcp?mode=search: two tools; finds get-sum; call_tool answers what a direct call does`, async ({
      expect,
    }) => {
      const client = await connect(flavour, "/mcp?mode=search");
      const listed = await client.listTools();
      expect(listed.map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
      expect(listed[0]).toMatchObject({ outputSchema: { type: "object" } });

      const found = await search(client, "add two numbers");
      expect(found.length).toBeLessThanOrEqual(5);
      const sum = found.find((tool) => tool.name === `${EV}__get-sum`);
      expect(sum).toMatchObject({
        description: "Returns the sum of two numbers",
        inputSchema: { properties: { a: expect.anything(), b: expect.anything() } },
      });

      const viaCallTool = await client.callTool("call_tool", {
        name: `${EV}__get-sum`,
        arguments: { a: 2, b: 3 },
      });
      const full = await connect(flavour, "/mcp?mode=full");
      const direct = await full.callTool(`${EV}__get-sum`, { a: 2, b: 3 });
      expect(viaCallTool.result).toEqual(direct.result);
      expect(JSON.stringify(viaCallTool.result.content)).toContain("5");

      // A file read through the stdio child, by the name search gave.
      const read = (await search(client, "read a file's contents")).find(
        (tool) => tool.name === `${FS}__read_text_file`,
      );
      expect(read).toBeDefined();
      const file = await client.callTool("call_tool", {
        name: read?.name,
        arguments: { path: join(tempBase, "files", "hello.txt") },
      });
      expect(JSON.stringify(file.result.content)).toContain("hello from the catalogue");

      // An unknown name: the same error as a direct call of it.
      const unknown = await outcome(client, "call_tool", { name: `${EV}__no-such-tool`, arguments: {} });
      expect(unknown.error).toBeDefined();
      expect(unknown).toEqual(await outcome(full, `${EV}__no-such-tool`, {}));
    });
  }

  it("scopes apply through search_tools and call_tool as to a direct call", async ({ expect }) => {
    const scoped = await connect("v2-modern", "/mcp?mode=search", evOnly.key);
    const found = await search(scoped, "list the files in a directory", 20);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((tool) => tool.name.startsWith(`${EV}__`))).toBe(true);
    const full = await connect("v2-modern", "/mcp?mode=full", evOnly.key);
    const refused = await outcome(scoped, "call_tool", {
      name: `${FS}__list_directory`,
      arguments: { path: "/" },
    });
    expect(refused.error).toMatch(/No server named/);
    expect(refused).toEqual(await outcome(full, `${FS}__list_directory`, { path: "/" }));
  });

  it("past the threshold /mcp is in search mode by itself; fewer tools, ?mode=full and /mcp/{server} list in full", async ({
    expect,
  }) => {
    const names = async (path: string, key?: string) =>
      (await (await connect("v2-modern", path, key)).listTools()).map((tool) => tool.name);
    // 527 tools > 64: search mode without asking.
    expect(await names("/mcp")).toEqual(["search_tools", "call_tool"]);
    // A key that sees server-everything alone (13 tools ≤ 64): the full list.
    const scoped = await names("/mcp", evOnly.key);
    expect(scoped).toContain(`${EV}__get-sum`);
    expect(scoped.length).toBeLessThanOrEqual(64);
    // Forced full: the whole catalogue (the client follows the pages).
    const full = await names("/mcp?mode=full");
    expect(full.length).toBeGreaterThan(500);
    expect(full).toEqual(
      expect.arrayContaining([`${EV}__get-sum`, `${FS}__read_text_file`, `${SUITE}__crm_create_contact`]),
    );
    expect(full).not.toContain("search_tools");
    // One server's endpoint lists its own 500 tools unless asked.
    expect(await names(`/mcp/${SUITE}`)).toHaveLength(500);
    expect(await names(`/mcp/${SUITE}?mode=search`)).toEqual(["search_tools", "call_tool"]);
    // …and there search_tools and call_tool use the upstream's own names.
    const own = await connect("v1", `/mcp/${SUITE}?mode=search`);
    const [invoice] = await search(own, "send a bill to a customer", 1);
    expect(invoice?.name).toBe("billing_create_invoice");
    const called = await own.callTool("call_tool", {
      name: "billing_create_invoice",
      arguments: { plan: "x" },
    });
    expect(JSON.parse(String(called.result.content[0]?.text))).toEqual({
      tool: "billing_create_invoice",
      arguments: { plan: "x" },
    });
  });

  it("a tool set's endpoint: search finds its tools as the set names them; past the threshold it switches by itself", async ({
    expect,
  }) => {
    const desk = await stack.call("POST", "/v1/toolsets", {
      name: "billing-desk",
      tools: [`${SUITE}__billing_create_invoice`, `${EV}__get-sum`],
      overrides: {
        [`${SUITE}__billing_create_invoice`]: {
          name: "bill_customer",
          description: "Send a customer a bill.",
        },
      },
    });
    expect(desk.status).toBe(201);
    const whole = await stack.call("POST", "/v1/toolsets", {
      name: "whole-suite",
      rules: [{ server: SUITE }],
    });
    expect(whole.status).toBe(201);

    // Two tools: the full list unless asked.
    const listed = await connect("v2-modern", "/mcp/sets/billing-desk");
    expect((await listed.listTools()).map((tool) => tool.name).sort()).toEqual([
      "bill_customer",
      `${EV}__get-sum`,
    ]);
    for (const flavour of FLAVOURS) {
      const client = await connect(flavour, "/mcp/sets/billing-desk?mode=search");
      expect((await client.listTools()).map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
      const [first] = await search(client, "send a bill to a customer", 1);
      expect(first).toMatchObject({ name: "bill_customer", description: "Send a customer a bill." });
      const called = await client.callTool("call_tool", { name: "bill_customer", arguments: { plan: "x" } });
      expect(JSON.parse(String(called.result.content[0]?.text))).toEqual({
        tool: "billing_create_invoice",
        arguments: { plan: "x" },
      });
      // A tool outside the set: the error a direct call on the set's endpoint gets.
      const outside = await outcome(client, "call_tool", { name: `${SUITE}__crm_create_contact` });
      expect(outside.error).toBeDefined();
      const direct = await connect(flavour, "/mcp/sets/billing-desk?mode=full");
      expect(outside).toEqual(await outcome(direct, `${SUITE}__crm_create_contact`, {}));
    }
    // 500 tools in a set: search mode by itself.
    const suiteSet = await connect("v1", "/mcp/sets/whole-suite");
    expect((await suiteSet.listTools()).map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
  });

  it("a 2025 session keeps the mode it opened in; an invalid mode is a 400 problem+json", async ({
    expect,
  }) => {
    let mode = "search";
    const client = new Client({ name: "search-mode-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp?mode=search`), {
        requestInit: { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } },
        // The session's later requests ask for the full list instead.
        fetch: (url, init) => fetch(String(url).replace("mode=search", `mode=${mode}`), init),
      }),
    );
    try {
      mode = "full";
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
    } finally {
      await client.close();
    }

    const invalid = await rawRequest(`${stack.api.url}/mcp?mode=everything`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    });
    expect(invalid.status).toBe(400);
    expect(String(invalid.headers["content-type"])).toContain("application/problem+json");
    expect(invalid.body).toMatchObject({ code: "request.invalid" });
  });

  it(`the right tool is in the top 5 for at least ${RECORDED_TOP5_RATE * 100}% of the 50 recorded tasks`, async ({
    expect,
  }) => {
    const tasks = catalogueTasks();
    expect(tasks).toHaveLength(50);
    const client = await connect("v2-modern", "/mcp?mode=search");
    const { rate, missed } = await hitRate(tasks, async (query) =>
      (await search(client, query)).map((tool) => tool.name),
    );
    expect({ rate, missed }).toMatchObject({ rate: expect.any(Number) });
    expect(rate, JSON.stringify(missed, null, 1)).toBeGreaterThanOrEqual(RECORDED_TOP5_RATE);
  });
});
