/**
 * Data plane against the published `@modelcontextprotocol/server-everything` over streamable HTTP
 * (its own process, on 127.0.0.1): list, `echo`, `get-sum`, structured content, mixed content
 * (`text` joins only the text parts), a tool-level error, an unknown tool, and progress notifications
 * extending the per-call timeout.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { type Everything, startEverything } from "../fixtures/everything";
import { createConnected, type Stack, startGatewayStack, uniqueName } from "./helpers";

describe.concurrent("data plane: server-everything", () => {
  let stack: Stack;
  let everything: Everything;
  const name = uniqueName("ev");
  const quick = uniqueName("evquick");

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startGatewayStack(), startEverything()]);
    await Promise.all([
      createConnected(stack, { name, url: everything.url }),
      // Same upstream, 1 s per-call timeout: only progress notifications can keep a longer call alive.
      createConnected(stack, { name: quick, url: everything.url, timeoutSeconds: 1 }),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
    await everything?.stop();
  });

  it("lists its tools as <server>__<tool>, including echo and get-sum", async ({ expect }) => {
    const tools = (await stack.listTools()).filter((tool) => tool.server === name);
    const listed = tools.map((tool) => tool.name);
    expect(listed).toEqual(expect.arrayContaining([`${name}__echo`, `${name}__get-sum`]));
    expect(listed).toEqual([...listed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(tools.find((tool) => tool.name === `${name}__get-sum`)).toMatchObject({
      server: name,
      description: "Returns the sum of two numbers",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    });
  });

  it("echo", async ({ expect }) => {
    const response = await stack.callTool(`${name}__echo`, { message: "hi there" });
    expect(response).toEqual({
      status: 200,
      body: { content: [{ type: "text", text: "Echo: hi there" }], text: "Echo: hi there", isError: false },
    });
  });

  it("get-sum", async ({ expect }) => {
    const response = await stack.callTool(`${name}__get-sum`, { a: 19, b: 23 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ text: "The sum of 19 and 23 is 42.", isError: false });
  });

  it("structuredContent is passed through", async ({ expect }) => {
    const response = await stack.callTool(`${name}__get-structured-content`, { location: "Chicago" });
    expect(response.status).toBe(200);
    const weather = { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 };
    expect(response.body.structuredContent).toEqual(weather);
    expect(JSON.parse(response.body.text)).toEqual(weather);
  });

  it("mixed content: `text` joins only the text parts, the image stays in content", async ({ expect }) => {
    const response = await stack.callTool(`${name}__get-tiny-image`, {});
    expect(response.status).toBe(200);
    const content = response.body.content as Array<{ type: string; text?: string }>;
    expect(content.map((part) => part.type)).toEqual(expect.arrayContaining(["text", "image"]));
    const texts = content.filter((part) => part.type === "text").map((part) => part.text);
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(response.body.text).toBe(texts.join("\n"));
  });

  it("invalid arguments come back as a tool-level error (isError) from the SDK server", async ({
    expect,
  }) => {
    const response = await stack.callTool(`${name}__get-sum`, { a: "one", b: 2 });
    // McpServer reports argument validation failures as tool results with isError: true.
    expect(response.status).toBe(200);
    expect(response.body.isError).toBe(true);
  });

  it("unknown tool → 404 tool.not_found", async ({ expect }) => {
    const response = await stack.callTool(`${name}__no-such-tool`, {});
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: "tool.not_found" });
  });

  it("progress notifications extend the per-call timeout (timeoutSeconds 1, a 2.5 s operation with progress every 0.5 s)", async ({
    expect,
  }) => {
    const started = Date.now();
    const response = await stack.callTool(`${quick}__trigger-long-running-operation`, {
      duration: 2.5,
      steps: 5,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.text).toMatch(/Long running operation completed/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_400);
  });

  it("…while the same operation without intermediate progress times out (504 upstream.timeout)", async ({
    expect,
  }) => {
    const started = Date.now();
    const response = await stack.callTool(`${quick}__trigger-long-running-operation`, {
      duration: 2.5,
      steps: 1,
    });
    const elapsed = Date.now() - started;
    expect(response.status, JSON.stringify(response.body)).toBe(504);
    expect(response.body).toMatchObject({ code: "upstream.timeout" });
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(2_500);
  });
});

describe("data plane: a server's resources and prompts, browsed over REST", () => {
  let stack: Stack;
  let everything: Everything;
  const name = uniqueName("evbrowse");

  beforeAll(async () => {
    [stack, everything] = await Promise.all([startGatewayStack(), startEverything()]);
    await createConnected(stack, { name, url: everything.url });
  });
  afterAll(async () => {
    await stack?.stop();
    await everything?.stop();
  });

  it("lists server-everything's resources, templates and prompts as it lists them", async ({ expect }) => {
    const resources = await stack.request("GET", `/v1/resources?server=${name}`);
    expect(resources.status).toBe(200);
    expect(resources.body).toMatchObject({ server: name, truncated: false });
    expect(resources.body.resources.length).toBeGreaterThan(0);
    expect(resources.body.resources[0]).toMatchObject({ uri: expect.any(String), name: expect.any(String) });
    expect(resources.body.resourceTemplates.length).toBeGreaterThan(0);

    const prompts = await stack.request("GET", `/v1/prompts?server=${name}`);
    expect(prompts.status).toBe(200);
    expect(prompts.body.prompts.map((prompt: { name: string }) => prompt.name)).toEqual(
      expect.arrayContaining([expect.stringMatching(/simple|args|complex/)]),
    );
  });

  it("treats a server out of the caller's scope as one that does not exist, and an unknown one alike", async ({
    expect,
  }) => {
    const other = await stack.request("POST", "/v1/keys", { body: { name: "browse-scoped", servers: [] } });
    expect(other.status).toBe(201);
    const asKey = await fetch(`${stack.api.url}/v1/prompts?server=${name}`, {
      headers: { authorization: `Bearer ${other.body.key}` },
    });
    expect(asKey.status).toBe(404);
    expect(((await asKey.json()) as { code: string }).code).toBe("server.not_found");
    const unknown = await stack.request("GET", "/v1/resources?server=nope");
    expect(unknown.status).toBe(404);
  });
});
