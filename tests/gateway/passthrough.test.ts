import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { type Stack, startStack, waitFor } from "../support/stack";

describe("/mcp/{server} passes resources and prompts through", () => {
  let stack: Stack;
  let everything: Everything;
  let toolsOnly: Upstream;
  let direct: Client;

  const connect = async (path: string) => {
    const client = new Client({ name: "passthrough-test", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } },
      }),
    );
    return client;
  };

  beforeAll(async () => {
    [stack, everything, toolsOnly] = await Promise.all([
      startStack(),
      startEverything(),
      startUpstream({ name: "plain" }),
    ]);
    for (const [name, url] of [
      ["ev", everything.url],
      ["plain", toolsOnly.url],
    ] as const) {
      const created = await stack.call("POST", "/v1/servers", { name, url });
      await waitFor(
        async () => (await stack.call("GET", `/v1/servers/${created.body.id}`)).body.status.state,
        (state) => state === "connected",
      );
    }
    direct = new Client({ name: "direct", version: "1" });
    await direct.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
  });
  afterAll(async () => {
    await direct?.close();
    await stack?.stop();
    await everything?.stop();
    await toolsOnly?.close();
  });

  it("offers the upstream's resources and prompts exactly as the upstream lists them", async () => {
    const client = await connect("/mcp/ev");

    const capabilities = client.getServerCapabilities();
    const [resources, templates, prompts] = await Promise.all([
      client.listResources(),
      client.listResourceTemplates(),
      client.listPrompts(),
    ]);

    expect(capabilities).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect(resources).toEqual(await direct.listResources());
    expect(templates).toEqual(await direct.listResourceTemplates());
    expect(prompts).toEqual(await direct.listPrompts());
    await client.close();
  });

  it("reads a resource and gets a prompt through the warm session", async () => {
    const client = await connect("/mcp/ev");
    const uri = (await direct.listResources()).resources[0]!.uri;

    const read = await client.readResource({ uri });
    const prompt = await client.getPrompt({ name: "simple-prompt" });

    expect(read).toEqual(await direct.readResource({ uri }));
    expect(prompt).toEqual(await direct.getPrompt({ name: "simple-prompt" }));
    await client.close();
  });

  it("passes the upstream's own JSON-RPC error through, once", async () => {
    const client = await connect("/mcp/ev");

    const error = await client.readResource({ uri: "demo://does-not-exist" }).catch((e: Error) => e);

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("not found");
    expect((error as Error).message.match(/MCP error/g)?.length).toBeLessThanOrEqual(2);
    await client.close();
  });

  it("a tools-only upstream offers tools only; the aggregated /mcp offers every server's resources and prompts", async () => {
    const plain = await connect("/mcp/plain");
    const aggregated = await connect("/mcp");

    expect(plain.getServerCapabilities()?.resources).toBeUndefined();
    expect(plain.getServerCapabilities()?.prompts).toBeUndefined();
    await expect(plain.listResources()).rejects.toThrow();
    expect(aggregated.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {} });
    // The tools-only server contributes nothing to the aggregated lists (and does not break them).
    const uris = (await aggregated.listResources()).resources.map((resource) => resource.uri);
    expect(uris.some((uri) => uri.includes("/mcpgw/plain/"))).toBe(false);
    await plain.close();
    await aggregated.close();
  });
});
