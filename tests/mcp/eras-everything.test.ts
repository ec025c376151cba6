/**
 * Both protocol eras through the gateway, fronting a 2025-only upstream (the published
 * server-everything over streamable HTTP): an SDK v2 client pinned to 2026-07-28 and an SDK 1.x client
 * (2025-11-25), each on `/mcp` (names `<server>__<tool>`) and on `/mcp/{server}` (its own names).
 *
 * - tools are listed and called; `trigger-long-running-operation` reports its progress to the caller;
 * - the upstream's mid-call elicitation and sampling requests reach the caller — pushed on a 2025
 *   caller's session, or (a 2026 caller) as `input_required` answered on the retry of a parked call —
 *   and the answers show in the results;
 * - `/mcp` serves the upstream's resources (under gateway URIs) and prompts (`<server>__<prompt>`);
 * - results pass whole: structured content, resource links, embedded resources, images and content
 *   annotations come out as a direct client sees them.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "../gateway/helpers";
import { type ClientFlavour, connectTestClient, SAMPLING_MODEL, type TestClient, textOf } from "./clients";
import { type CreatedKey, createKey } from "./helpers";
import { comparable } from "./results";

const FLAVOURS = ["v2-modern", "v1"] as const satisfies readonly ClientFlavour[];

describe("both eras through the gateway, fronting server-everything (2025 only)", () => {
  let stack: Stack;
  let everything: Everything;
  let key: CreatedKey;
  const ev = uniqueName("ev");
  const clients: TestClient[] = [];
  /** `/mcp` names a tool `<server>__<tool>`; `/mcp/{server}` by its own name. */
  const endpoints = [
    { label: "/mcp", path: "/mcp", tool: (name: string) => `${ev}__${name}` },
    { label: "/mcp/{server}", path: `/mcp/${ev}`, tool: (name: string) => name },
  ];

  async function connect(flavour: ClientFlavour, path: string): Promise<TestClient> {
    const client = await connectTestClient(flavour, `${stack.api.url}${path}`, { key: key.key });
    clients.push(client);
    return client;
  }

  /** A client straight to server-everything (no gateway): the reference for what results look like. */
  async function direct(): Promise<TestClient> {
    const client = await connectTestClient("v1", everything.url);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startGatewayStack(), startEverything()]);
    await createConnected(stack, { name: ev, url: everything.url });
    key = await createKey(stack, "eras e2e");
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await stack?.stop();
    await everything?.stop();
  });

  for (const flavour of FLAVOURS) {
    const era =
      flavour === "v1" ? { era: "legacy", version: "2025-11-25" } : { era: "modern", version: "2026-07-28" };

    for (const endpoint of endpoints) {
      it(`${flavour} on ${endpoint.label}: lists and calls tools; ≥ 3 progress notifications of a long-running operation`, async ({
        expect,
      }) => {
        const client = await connect(flavour, endpoint.path);
        expect([client.era, client.protocolVersion]).toEqual([era.era, era.version]);

        const names = (await client.listTools()).map((tool) => tool.name);
        expect(names).toEqual(
          expect.arrayContaining(
            [
              "echo",
              "get-sum",
              "trigger-long-running-operation",
              "trigger-elicitation-request",
              "trigger-sampling-request",
            ].map(endpoint.tool),
          ),
        );
        const echoed = await client.callTool(endpoint.tool("echo"), { message: `${flavour} says hi` });
        expect(textOf(echoed.result)).toBe(`Echo: ${flavour} says hi`);
        const sum = await client.callTool(endpoint.tool("get-sum"), { a: 19, b: 23 });
        expect(textOf(sum.result)).toBe("The sum of 19 and 23 is 42.");

        const { result, progress } = await client.callTool(endpoint.tool("trigger-long-running-operation"), {
          duration: 2,
          steps: 4,
        });
        expect(textOf(result)).toBe("Long running operation completed. Duration: 2 seconds, Steps: 4.");
        expect(progress.length).toBeGreaterThanOrEqual(3);
        expect(progress.map((update) => update.progress)).toEqual(
          [...progress.map((update) => update.progress)].sort((a, b) => a - b),
        );
        expect(progress.at(-1)).toEqual({ progress: 4, total: 4 });
      });

      it(`${flavour} on ${endpoint.label}: the upstream's elicitation and sampling requests are answered by the caller`, async ({
        expect,
      }) => {
        const client = await connect(flavour, endpoint.path);
        const elicited = await client.callTool(endpoint.tool("trigger-elicitation-request"));
        const elicitedText = textOf(elicited.result);
        expect(elicitedText).toContain("✅ User provided the requested information!");
        // The caller's answer (tests/mcp/clients.ts fills the form: strings "yes", formats, defaults).
        for (const line of [
          "- Name: yes",
          "- Agreed to terms: true",
          "- Email: e2e@example.com",
          "- Homepage: https://example.com/e2e",
          "- Birthdate: 2000-01-01",
          "- Favorite Integer: 42",
          "- Favorite Number: 3.14",
        ])
          expect(elicitedText).toContain(line);
        expect(elicitedText).toContain('"untitledSingleSelectEnum": "Monica"');

        const sampled = await client.callTool(endpoint.tool("trigger-sampling-request"), {
          prompt: `from ${flavour}`,
        });
        const sampledText = textOf(sampled.result);
        expect(sampledText).toContain("LLM sampling result:");
        expect(sampledText).toContain(`echo: Resource trigger-sampling-request context: from ${flavour}`);
        expect(sampledText).toContain(SAMPLING_MODEL);

        // The caller was asked exactly these (server-everything may also list roots after connecting).
        const asked = client.asked.filter((ask) => ask.method !== "roots/list");
        expect(asked.map((ask) => ask.method)).toEqual(["elicitation/create", "sampling/createMessage"]);
        expect(asked[0]?.params).toMatchObject({
          message: "Please provide inputs for the following fields:",
          requestedSchema: { type: "object", required: ["name"] },
        });
        expect(asked[1]?.params).toMatchObject({
          systemPrompt: "You are a helpful test server.",
          messages: [
            {
              role: "user",
              content: { type: "text", text: `Resource trigger-sampling-request context: from ${flavour}` },
            },
          ],
        });
      });
    }

    it(`${flavour} on /mcp: resources under gateway URIs are listed and read; prompts as <server>__<prompt>`, async ({
      expect,
    }) => {
      const reference = await direct();
      const own = await reference.listResources();
      const document = own.find((resource) => resource.uri.endsWith("/features.md"));
      expect(document?.uri).toBe("demo://resource/static/document/features.md");
      const ownUri = document?.uri as string;

      const client = await connect(flavour, "/mcp");
      const resources = await client.listResources();
      const gatewayUri = `demo://mcpgw/${ev}/${encodeURIComponent(ownUri)}`;
      const listed = resources.find((resource) => resource.uri === gatewayUri);
      expect(listed).toEqual({ ...document, uri: gatewayUri });
      expect(resources.every((resource) => resource.uri.includes(`://mcpgw/${ev}/`))).toBe(true);

      const contents = await client.readResource(gatewayUri);
      const ownContents = await reference.readResource(ownUri);
      expect(contents).toEqual(ownContents.map((content) => ({ ...content, uri: gatewayUri })));
      expect(contents[0]).toMatchObject({ mimeType: "text/markdown", text: expect.stringContaining("#") });

      const prompts = (await client.listPrompts()).map((prompt) => prompt.name);
      expect(prompts).toEqual(expect.arrayContaining([`${ev}__simple-prompt`, `${ev}__args-prompt`]));
      expect(prompts.every((name) => name.startsWith(`${ev}__`))).toBe(true);
      const prompt = await client.getPrompt(`${ev}__args-prompt`, { city: "Lisbon", state: "Tejo" });
      expect(prompt.messages).toEqual([
        { role: "user", content: { type: "text", text: "What's weather in Lisbon, Tejo?" } },
      ]);
    });
  }

  it("results pass whole on both endpoints and in both eras: structured content, resource links, embedded resources, images, annotations", async ({
    expect,
  }) => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ["get-structured-content", { location: "Chicago" }],
      ["get-resource-links", { count: 4 }],
      ["get-resource-reference", { resourceType: "Text", resourceId: 2 }],
      ["get-tiny-image", {}],
      ["get-annotated-message", { messageType: "error", includeImage: true }],
    ];
    const reference = await direct();
    const expected = new Map<string, unknown>();
    for (const [tool, args] of calls)
      expected.set(tool, comparable((await reference.callTool(tool, args)).result));
    // What each kind of content looks like, so a comparison of empty results proves nothing.
    expect(expected.get("get-structured-content")).toMatchObject({
      structuredContent: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
    });
    expect(JSON.stringify(expected.get("get-resource-links"))).toContain('"type":"resource_link"');
    expect(JSON.stringify(expected.get("get-resource-reference"))).toContain('"type":"resource"');
    expect(JSON.stringify(expected.get("get-tiny-image"))).toContain('"type":"image"');
    expect(JSON.stringify(expected.get("get-annotated-message"))).toContain('"annotations"');

    for (const flavour of FLAVOURS) {
      for (const endpoint of endpoints) {
        const client = await connect(flavour, endpoint.path);
        for (const [tool, args] of calls) {
          const { result } = await client.callTool(endpoint.tool(tool), args);
          expect(comparable(result), `${flavour} ${endpoint.label} ${tool}`).toEqual(expected.get(tool));
        }
      }
    }
  });
});
