/**
 * An upstream (server-everything, 2025 only) asks `roots/list` while a caller's long-running call is
 * under way — it asks each new session for its roots, 350 ms after it starts — and that caller, an SDK
 * v2 client on 2026-07-28, declared no roots capability: the gateway answers the upstream itself (no
 * roots; it declared roots to the upstream) and the call goes on, on `/mcp/{server}` as on `/mcp`.
 * Each case has a server of its own, so its call is the first on a fresh upstream session.
 *
 * A 2026-07-28 upstream (the conformance fixture, spoken to in 2026) asks for roots through
 * `input_required`, and only for what the request's envelope declares: the gateway declares roots for
 * every caller and answers the roots questions of one that declared none itself (no roots) — the call
 * of a 2026 or a 2025 client without roots (and a REST call) succeeds with 0 roots, the client asked
 * only the rest; a client that declared roots is asked, as before. An upstream that asks for roots
 * round after round is answered a bounded number of times, then the call fails with its error.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, inputRequired, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type ConformanceUpstream, startConformanceUpstream } from "../fixtures/conformance-upstream";
import { type Everything, startEverything } from "../fixtures/everything";
import { listenWeb, type WebListener } from "../fixtures/web-listener";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { connectTestClient, TEST_ROOT, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey } from "./helpers";

const LONG_CALL = "trigger-long-running-operation";

describe("an upstream's roots/list to a caller that declared no roots", () => {
  let stack: Stack;
  let everything: Everything;
  let key: CreatedKey;

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startGatewayStack(), startEverything()]);
    key = await createKey(stack, "no roots");
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    await everything?.stop();
  });

  for (const endpoint of ["/mcp/{server}", "/mcp"] as const) {
    it(`an SDK v2 client's long-running call on ${endpoint} completes`, async ({ expect }) => {
      const name = uniqueName("roots");
      await createConnected(stack, { name, url: everything.url });
      const [path, tool] =
        endpoint === "/mcp" ? ["/mcp", `${name}__${LONG_CALL}`] : [`/mcp/${name}`, LONG_CALL];
      const client = new Client(
        { name: "no-roots", version: "1.0.0" },
        { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stack.api.url}${path}`), {
          requestInit: { headers: { authorization: `Bearer ${key.key}` } },
        }),
      );
      try {
        const result = await client.callTool(
          { name: tool, arguments: { duration: 2, steps: 4 } },
          { timeout: 15_000 },
        );
        expect(result.content).toEqual([
          { type: "text", text: "Long running operation completed. Duration: 2 seconds, Steps: 4." },
        ]);
      } finally {
        await client.close();
      }
    });
  }
});

describe("a 2026 upstream's roots question to a caller that declared no roots", () => {
  let stack: Stack;
  let upstream: ConformanceUpstream;
  let key: CreatedKey;
  const server = uniqueName("roots26");
  const clients: TestClient[] = [];

  async function connect(flavour: "v2-modern" | "v1", path: string, noRoots = true): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key: key.key, noRoots });
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    [stack, upstream] = await Promise.all([startGatewayStack(), startConformanceUpstream()]);
    await createConnected(stack, { name: server, url: upstream.url });
    key = await createKey(stack, "no roots 2026");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await upstream?.close();
  });

  for (const flavour of ["v2-modern", "v1"] as const) {
    it(`${flavour} without roots: the call succeeds with 0 roots, on /mcp/{server} and /mcp`, async ({
      expect,
    }) => {
      const direct = await connect(flavour, `/mcp/${server}`);
      expect(direct.era).toBe(flavour === "v1" ? "legacy" : "modern");
      const { result } = await direct.callTool("test_input_required_result_list_roots");
      expect(result.isError ?? false).toBe(false);
      expect(textOf(result)).toBe("Roots (0): ");
      const aggregated = await connect(flavour, "/mcp");
      const viaAll = await aggregated.callTool(`${server}__test_input_required_result_list_roots`);
      expect(textOf(viaAll.result)).toBe("Roots (0): ");
      expect([...direct.asked, ...aggregated.asked]).toEqual([]);
    });

    it(`${flavour} without roots: asked only the rest of a round, its answers joined by the gateway's`, async ({
      expect,
    }) => {
      const client = await connect(flavour, `/mcp/${server}`);
      const { result } = await client.callTool("test_input_required_result_multiple_inputs");
      expect(result.isError ?? false).toBe(false);
      expect(textOf(result)).toBe("echo: Generate a greeting, yes (0 roots)");
      expect(client.asked.map((ask) => ask.method).sort()).toEqual([
        "elicitation/create",
        "sampling/createMessage",
      ]);
    });
  }

  it("a client that declared roots is asked for them, as before", async ({ expect }) => {
    const client = await connect("v2-modern", `/mcp/${server}`, false);
    const { result } = await client.callTool("test_input_required_result_list_roots");
    expect(textOf(result)).toBe(`Roots (1): ${TEST_ROOT.uri}`);
    expect(client.asked.map((ask) => ask.method)).toEqual(["roots/list"]);
  });

  it("a REST call (no client to ask) succeeds with 0 roots", async ({ expect }) => {
    const { status, body } = await stack.callTool(`${server}__test_input_required_result_list_roots`);
    expect(status).toBe(200);
    expect(body.text).toBe("Roots (0): ");
  });

  it("an upstream that asks for roots round after round is answered 8 times, then the call fails", async ({
    expect,
  }) => {
    let rounds = 0;
    const handler = createMcpHandler(
      () => {
        const asker = new McpServer(
          { name: "roots-asker", version: "1.0.0" },
          { capabilities: { tools: {} } },
        );
        asker.registerTool("ask_roots", { description: "Asks for roots, always" }, () => {
          rounds++;
          return inputRequired({ inputRequests: { again: inputRequired.listRoots() } });
        });
        return asker;
      },
      { legacy: "reject" },
    );
    const asker: WebListener = await listenWeb((request) => handler.fetch(request));
    try {
      const name = uniqueName("asker");
      await createConnected(stack, { name, url: `${asker.origin}/mcp` });
      const { status, body } = await stack.callTool(`${name}__ask_roots`);
      expect(status).toBe(502);
      expect(body.detail).toMatch(/kept asking for roots after 8 answers of none/);
      expect(rounds).toBe(9);
    } finally {
      await asker.close();
    }
  });
});
