/**
 * Nothing an upstream says is lost or replaced on `/mcp/{server}`, and the gateway takes what it can
 * read without doubt (tests/fixtures/faithful-upstream.ts, once per upstream era, each client era):
 *
 * - the upstream's `instructions` and its `serverInfo` (title, icons) reach the client — in the 2025
 *   `initialize` result and the 2026 `server/discover` — and the gateway names itself in `_meta`;
 * - a tool's `execution` is listed as the upstream says, on `/mcp` and `/mcp/{server}` — but a tool whose
 *   `taskSupport` is "required" is listed without it and called plainly: the gateway runs it as a task on
 *   the upstream and answers its result (server-everything's `simulate-research-query`);
 * - an upstream's JSON-RPC error reaches the caller with its `data` as sent (a -32042 URL elicitation
 *   with more than its elicitations) — and a 2026 caller, whose revision has no -32042, is asked to open
 *   the links by `input_required`;
 * - an answer that can be read one way only is read: a 2026 result without `resultType`, a body of one
 *   JSON-RPC message a line (NDJSON); one that cannot be read is refused saying what was wrong with it.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import {
  FAITHFUL_INFO,
  FAITHFUL_INSTRUCTIONS,
  type FaithfulUpstream,
  LINK_ERROR,
  startFaithfulUpstream,
} from "../fixtures/faithful-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { connectTestClient, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey, INITIALIZE, rawRequest } from "./helpers";

const ERAS = ["modern", "legacy"] as const;
const GATEWAY_META_KEY = "io.mcpgw/gateway";
const TIMEOUT = 10_000;

describe("what an upstream says reaches the client through /mcp/{server}", () => {
  let stack: Stack;
  let key: CreatedKey;
  let everything: Everything;
  const ev = uniqueName("ev-tasks");
  const upstreams: Partial<Record<(typeof ERAS)[number], FaithfulUpstream>> = {};
  const names = { modern: uniqueName("faithful-modern"), legacy: uniqueName("faithful-legacy") };
  const closers: Array<() => Promise<unknown>> = [];

  async function v2(path: string): Promise<ClientV2> {
    const client = new ClientV2(
      { name: "faithful-e2e", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const transport = new TransportV2(new URL(`${stack.api.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${key.key}` } },
    });
    await client.connect(transport, { timeout: TIMEOUT });
    closers.push(() => client.close());
    return client;
  }

  async function v1(path: string): Promise<ClientV1> {
    const client = new ClientV1({ name: "faithful-e2e", version: "1.0.0" });
    const transport = new TransportV1(new URL(`${stack.api.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${key.key}` } },
    });
    await client.connect(transport, { timeout: TIMEOUT });
    closers.push(() => client.close());
    return client;
  }

  beforeAll(async () => {
    const [started, modern, legacy, reference] = await Promise.all([
      startGatewayStack(),
      startFaithfulUpstream("modern"),
      startFaithfulUpstream("legacy"),
      startEverything(),
    ]);
    stack = started;
    upstreams.modern = modern;
    upstreams.legacy = legacy;
    everything = reference;
    await Promise.all([
      ...ERAS.map((era) => createConnected(stack, { name: names[era], url: upstreams[era]?.url })),
      createConnected(stack, { name: ev, url: everything.url }),
    ]);
    key = await createKey(stack, "faithful e2e");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(closers.map((close) => close()));
    await stack?.stop();
    await Promise.allSettled(Object.values(upstreams).map((upstream) => upstream?.close()));
    await everything?.stop();
  });

  for (const era of ERAS) {
    it(`a ${era} upstream's instructions, title and icons reach 2026 and 2025 clients; the gateway is in _meta`, async ({
      expect,
    }) => {
      const path = `/mcp/${names[era]}`;
      const modern = await v2(path);
      expect(modern.getInstructions()).toBe(FAITHFUL_INSTRUCTIONS);
      expect(modern.getServerVersion()).toEqual(FAITHFUL_INFO);
      expect(modern.getDiscoverResult()?._meta?.[GATEWAY_META_KEY]).toEqual({
        name: "mcp-gateway",
        version: expect.any(String),
      });

      const legacy = await v1(path);
      expect(legacy.getInstructions()).toBe(FAITHFUL_INSTRUCTIONS);
      expect(legacy.getServerVersion()).toEqual(FAITHFUL_INFO);
      const initialized = await rawRequest(`${stack.api.url}${path}`, {
        headers: { authorization: `Bearer ${key.key}`, accept: "application/json" },
        body: INITIALIZE,
      });
      expect(initialized.body.result).toMatchObject({
        instructions: FAITHFUL_INSTRUCTIONS,
        serverInfo: FAITHFUL_INFO,
        _meta: { [GATEWAY_META_KEY]: { name: "mcp-gateway", version: expect.any(String) } },
      });
    });
  }

  it("/mcp keeps the gateway's own identity and instructions", async ({ expect }) => {
    const legacy = await v1("/mcp");
    expect(legacy.getServerVersion()).toMatchObject({ name: "mcp-gateway" });
    expect(legacy.getInstructions()).toMatch(/<server>__<name>/);
  });

  async function testClient(flavour: "v2-modern" | "v1", path: string): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key: key.key });
    closers.push(() => client.close());
    return client;
  }

  for (const flavour of ["v2-modern", "v1"] as const) {
    it(`${flavour}: a tool's execution is listed on /mcp and /mcp/{server}; taskSupport "required" is not`, async ({
      expect,
    }) => {
      const server = names.legacy;
      for (const [path, name] of [
        [`/mcp/${server}`, (tool: string) => tool],
        ["/mcp", (tool: string) => `${server}__${tool}`],
      ] as const) {
        const tools = await (await testClient(flavour, path)).listTools();
        const echo = tools.find((tool) => tool.name === name("echo"));
        const chore = tools.find((tool) => tool.name === name("chore"));
        expect(chore).toBeDefined();
        expect((chore?.execution as { taskSupport?: unknown } | undefined)?.taskSupport).toBeUndefined();
        // 2026-07-28 deleted `execution` from Tool (tasks are an extension there): a 2025 client sees it.
        if (flavour === "v1") expect(echo?.execution).toEqual({ taskSupport: "optional" });
        else expect(echo).toBeDefined();
      }
    });

    it(`${flavour}: a tool that requires a task is called plainly through /mcp/{server} and /mcp`, async ({
      expect,
    }) => {
      for (const [path, name] of [
        [`/mcp/${ev}`, "simulate-research-query"],
        ["/mcp", `${ev}__simulate-research-query`],
      ] as const) {
        const client = await testClient(flavour, path);
        const listed = (await client.listTools()).find((tool) => tool.name === name);
        expect((listed?.execution as { taskSupport?: unknown } | undefined)?.taskSupport).not.toBe(
          "required",
        );
        const { result } = await client.callTool(name, { topic: "gateways" }, { timeoutMs: 20_000 });
        expect(result.isError ?? false).toBe(false);
        expect(textOf(result)).toContain("# Research Report: gateways");
      }
    }, 60_000);
  }

  for (const era of ERAS) {
    it(`a ${era} upstream's error reaches a 2025 caller with its data as sent, on /mcp/{server} and /mcp`, async ({
      expect,
    }) => {
      const server = names[era];
      for (const [path, name] of [
        [`/mcp/${server}`, "link"],
        ["/mcp", `${server}__link`],
      ] as const) {
        // Raw: the SDK clients themselves keep only a -32042's elicitations.
        const answer = await rawRequest(`${stack.api.url}${path}`, {
          headers: { authorization: `Bearer ${key.key}`, accept: "application/json" },
          body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: {} } },
        });
        const error = answer.body.error as { code?: unknown; data?: unknown } | undefined;
        expect(error?.code).toBe(LINK_ERROR.code);
        expect(error?.data).toEqual(LINK_ERROR.data);
      }
    });
  }

  it("a 2025 upstream's -32042 reaches a 2026 caller as input_required asking it to open the link", async ({
    expect,
  }) => {
    const client = new ClientV2(
      { name: "faithful-e2e", version: "1.0.0" },
      {
        capabilities: { elicitation: { url: {} } },
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        inputRequired: { autoFulfill: false },
      },
    );
    await client.connect(
      new TransportV2(new URL(`${stack.api.url}/mcp/${names.legacy}`), {
        requestInit: { headers: { authorization: `Bearer ${key.key}` } },
      }),
      { timeout: TIMEOUT },
    );
    closers.push(() => client.close());
    const answer = (await client.callTool({ name: "link", arguments: {} }, {
      allowInputRequired: true,
      timeout: TIMEOUT,
    } as never)) as Record<string, unknown>;
    const elicitation = LINK_ERROR.data.elicitations[0] as (typeof LINK_ERROR.data.elicitations)[number];
    expect(answer).toMatchObject({
      resultType: "input_required",
      inputRequests: { [elicitation.elicitationId]: { method: "elicitation/create", params: elicitation } },
      requestState: expect.any(String),
    });
  });

  for (const flavour of ["v2-modern", "v1"] as const) {
    it(`${flavour}: a 2026 result without resultType, and an NDJSON body, are read; garbage is named`, async ({
      expect,
    }) => {
      const modern = await testClient(flavour, `/mcp/${names.modern}`);
      const bare = await modern.callTool("bare");
      expect(textOf(bare.result)).toBe("bare done");
      for (const era of ERAS) {
        const client = era === "modern" ? modern : await testClient(flavour, `/mcp/${names[era]}`);
        const chatty = await client.callTool("chatty");
        expect(textOf(chatty.result)).toBe("chatty done");
        const refused = await client.callTool("garbled").then(
          () => undefined,
          (error: unknown) => (error as Error).message,
        );
        expect(refused).toMatch(/cannot read: its answer is not JSON/);
        expect(refused).not.toMatch(/could not be reached|unreachable/);
      }
    });
  }
});
