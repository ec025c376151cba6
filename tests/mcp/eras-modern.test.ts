/**
 * A 2026-07-28-only upstream (tests/fixtures/modern-upstream.ts: no initialize, no sessions) behind the
 * gateway:
 *
 * - it connects, and its status names the revision it speaks (`status.protocolVersion`, `status.eras`);
 * - its tools are called over REST and over MCP, on `/mcp` and `/mcp/{server}`;
 * - its multi round-trip tool `confirm` (an `input_required` form elicitation) is answered by a 2026
 *   caller on its retry, and by a 2025 caller through an elicitation pushed on its session;
 * - an MCP App tool keeps its `_meta.ui` and `icons` — on `/mcp` its `resourceUri` is the gateway URI
 *   of the app's `ui://` resource, which `/mcp` serves by that URI;
 * - a result passes whole: every kind of content, structured content, the result's own `_meta`.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  MCP_APP_MIME_TYPE,
  MODERN_APP_URI,
  type ModernUpstream,
  startModernUpstream,
} from "../fixtures/modern-upstream";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type ClientFlavour, connectTestClient, SAMPLING_MODEL, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey } from "./helpers";
import { comparable } from "./results";

const FLAVOURS = ["v2-modern", "v1"] as const satisfies readonly ClientFlavour[];

describe("a 2026-07-28-only upstream behind the gateway", () => {
  let stack: Stack;
  let upstream: ModernUpstream;
  let key: CreatedKey;
  let serverId: string;
  const modern = uniqueName("modern");
  const clients: TestClient[] = [];
  const endpoints = [
    { label: "/mcp", path: "/mcp", tool: (name: string) => `${modern}__${name}` },
    { label: "/mcp/{server}", path: `/mcp/${modern}`, tool: (name: string) => name },
  ];

  async function connect(flavour: ClientFlavour, path: string): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key: key.key });
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    [stack, upstream] = await Promise.all([startGatewayStack(), startModernUpstream({ name: "modern-e2e" })]);
    serverId = await createConnected(stack, { name: modern, url: upstream.url });
    key = await createKey(stack, "modern e2e");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await upstream?.close();
  });

  it("connects; GET /v1/servers/{id} shows status.protocolVersion 2026-07-28; tools are called over REST", async ({
    expect,
  }) => {
    const server = await stack.call("GET", `/v1/servers/${serverId}`);
    expect(server.status).toBe(200);
    expect(server.body.status).toMatchObject({
      state: "connected",
      protocolVersion: "2026-07-28",
      eras: ["2026-07-28"],
    });
    // Only the probe tried 2025 on it (its initialize, refused): calls never do.
    const refused = upstream.legacyRefused;

    const sum = await stack.callTool(`${modern}__add`, { a: 2, b: 40 });
    expect(sum.status).toBe(200);
    expect(comparable(sum.body)).toEqual({
      content: [{ type: "text", text: "42" }],
      structuredContent: { sum: 42 },
      text: "42",
    });
    const echoed = await stack.callTool(`${modern}__echo`, { text: "over REST" });
    expect(echoed.body).toMatchObject({ structuredContent: { text: "over REST" }, text: "over REST" });
    const failed = await stack.callTool(`${modern}__fail`);
    expect(failed).toMatchObject({ status: 200, body: { text: "boom", isError: true } });
    // REST declares no client capabilities, so the upstream does not ask: a problem that says why, not a hang.
    const asking = await stack.callTool(`${modern}__confirm`, { question: "REST?" });
    expect(asking.status).toBe(502);
    expect(asking.body.detail).toMatch(/elicitation/);
    expect(upstream.legacyRefused).toBe(refused);
  });

  it("a REST result carries no upstream protocol envelope (as the MCP endpoints strip it)", async ({
    expect,
  }) => {
    // The 2026 upstream stamps `_meta["io.modelcontextprotocol/serverInfo"]` (itself) on every result: MCP
    // protocol envelope, not the tool's answer — the gateway drops it (withoutEnvelope in
    // packages/upstream/src/call.ts). The same call over REST should not differ by the upstream's era.
    const sum = await stack.callTool(`${modern}__add`, { a: 2, b: 40 });
    expect(sum).toEqual({
      status: 200,
      body: {
        content: [{ type: "text", text: "42" }],
        structuredContent: { sum: 42 },
        text: "42",
        isError: false,
      },
    });
    const rich = await stack.callTool(`${modern}__rich_result`);
    expect(rich.body._meta).toEqual({ "example.com/trace": { id: "trace-1", spans: 2 } });
  });

  for (const endpoint of endpoints) {
    it(`v2-modern on ${endpoint.label}: tools listed and called; multi round-trip confirm and summarize answered on the retry`, async ({
      expect,
    }) => {
      const client = await connect("v2-modern", endpoint.path);
      expect(client.protocolVersion).toBe("2026-07-28");
      const names = (await client.listTools()).map((tool) => tool.name);
      expect(names).toEqual(
        expect.arrayContaining(["echo", "add", "confirm", "summarize"].map(endpoint.tool)),
      );
      const sum = await client.callTool(endpoint.tool("add"), { a: 20, b: 22 });
      expect(sum.result).toMatchObject({
        content: [{ type: "text", text: "42" }],
        structuredContent: { sum: 42 },
      });

      const question = `Ship it via ${endpoint.label}?`;
      const confirmed = await client.callTool(endpoint.tool("confirm"), { question });
      expect(textOf(confirmed.result)).toBe("confirmed: yes");
      const summary = await client.callTool(endpoint.tool("summarize"), { text: "a long story" });
      expect(textOf(summary.result)).toBe("summary: echo: Summarize: a long story");
      expect(client.asked.map((ask) => [ask.method, ask.params.message ?? ask.answer.model])).toEqual([
        ["elicitation/create", question],
        ["sampling/createMessage", SAMPLING_MODEL],
      ]);
    });

    it(`v1 (2025) on ${endpoint.label}: the same confirm is answered through an elicitation pushed on its session`, async ({
      expect,
    }) => {
      const client = await connect("v1", endpoint.path);
      expect([client.era, client.protocolVersion]).toEqual(["legacy", "2025-11-25"]);
      const question = `Ship it (2025) via ${endpoint.label}?`;
      const confirmed = await client.callTool(endpoint.tool("confirm"), { question });
      expect(confirmed.result.isError ?? false).toBe(false);
      expect(textOf(confirmed.result)).toBe("confirmed: yes");
      expect(client.asked).toEqual([
        {
          method: "elicitation/create",
          params: expect.objectContaining({
            message: question,
            requestedSchema: expect.objectContaining({ required: ["answer"] }),
          }),
          answer: { action: "accept", content: { answer: "yes" } },
        },
      ]);
      const summary = await client.callTool(endpoint.tool("summarize"), { text: "an old story" });
      expect(textOf(summary.result)).toBe("summary: echo: Summarize: an old story");
    });
  }

  for (const flavour of FLAVOURS) {
    it(`${flavour}: the MCP App tool keeps _meta.ui and icons on both endpoints; its ui:// resource is read through /mcp by the URI it names`, async ({
      expect,
    }) => {
      const gatewayAppUri = `ui://mcpgw/${modern}/${encodeURIComponent(MODERN_APP_URI)}`;
      const icons = [
        { src: expect.stringMatching(/^data:image\/png;base64,/), mimeType: "image/png", sizes: ["1x1"] },
      ];

      const front = await connect(flavour, `/mcp/${modern}`);
      const own = (await front.listTools()).find((tool) => tool.name === "show_app");
      expect(own).toMatchObject({
        title: "Show the app",
        _meta: { ui: { resourceUri: MODERN_APP_URI } },
        icons,
      });

      const all = await connect(flavour, "/mcp");
      const aggregated = (await all.listTools()).find((tool) => tool.name === `${modern}__show_app`);
      expect(aggregated).toMatchObject({
        title: "Show the app",
        _meta: { ui: { resourceUri: gatewayAppUri } },
        icons,
      });
      // Only the name and the resource URI differ.
      expect({ ...aggregated, name: "show_app", _meta: own?._meta }).toEqual(own);

      const uri = gatewayAppUri;
      expect((await all.listResources()).map((resource) => resource.uri)).toContain(uri);
      const contents = await all.readResource(uri);
      expect(contents).toEqual([
        { uri, mimeType: MCP_APP_MIME_TYPE, text: expect.stringContaining("<h1>Modern app</h1>") },
      ]);
      // The front reads it by the upstream's own URI.
      expect(await front.readResource(MODERN_APP_URI)).toEqual([{ ...contents[0], uri: MODERN_APP_URI }]);

      const shown = await all.callTool(`${modern}__show_app`);
      expect(shown.result).toMatchObject({ structuredContent: { shown: true } });
    });
  }

  it("results pass whole in both eras and on both endpoints: text, image, audio, resource link, embedded resource, structured content, result _meta", async ({
    expect,
  }) => {
    const reference = await connectTestClient("v2-modern", upstream.url);
    clients.push(reference);
    const { result: own } = await reference.callTool("rich_result");
    const expected = comparable(own);
    expect(expected).toMatchObject({
      content: [
        { type: "text" },
        { type: "image" },
        { type: "audio", annotations: { audience: ["user"] } },
        { type: "resource_link", uri: "modern://readme" },
        { type: "resource", resource: { uri: "modern://notes/alpha" } },
      ],
      structuredContent: { kinds: expect.any(Array) },
      _meta: { "example.com/trace": { id: "trace-1", spans: 2 } },
    });

    for (const flavour of FLAVOURS) {
      for (const endpoint of endpoints) {
        const client = await connect(flavour, endpoint.path);
        const { result } = await client.callTool(endpoint.tool("rich_result"));
        expect(comparable(result), `${flavour} ${endpoint.label}`).toEqual(expected);
      }
    }
    // REST passes the same content, structured content and _meta.
    const rest = await stack.callTool(`${modern}__rich_result`);
    expect(rest.status).toBe(200);
    expect(comparable(rest.body)).toEqual({ ...expected, text: "every kind of content" });
  });
});
