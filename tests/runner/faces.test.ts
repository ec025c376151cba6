/**
 * A runner face speaks both MCP eras on one URL, in front of a 2025-era stdio child
 * (`@modelcontextprotocol/server-everything`): a 2026-07-28 client discovers and calls, a 2025 client
 * initializes and calls, progress of a long call reaches both, and the child's requests for input
 * during a call (elicitation, sampling) reach a 2026 caller as `input_required` (answered by its retry)
 * and a 2025 caller on its request's stream — while a caller that cannot answer leaves the child with
 * an error.
 */
import {
  Client,
  type ClientOptions,
  isInputRequiredResult,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createServer,
  everythingEntry,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  uniqueName,
} from "./helpers";

const INFO = { name: "faces-test", version: "1.0.0" };
const ELICITED = { name: "Ada Lovelace", check: true, integer: 7 };
const SAMPLED = {
  role: "assistant",
  content: { type: "text", text: "a sampled answer" },
  model: "test-model",
};

/** The MRTR fields of a retry (the SDK's request params type does not list them). */
function retry(inputResponses: Record<string, unknown>, requestState: string | undefined): object {
  return { inputResponses, ...(requestState === undefined ? {} : { requestState }) };
}

/** The text parts of a tool result, joined. */
function text(result: unknown): string {
  return ((result as { content?: Array<{ type: string; text?: string }> }).content ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("\n");
}

describe("runner: a face speaks both eras", () => {
  let stack: RunnerStack;
  let url: URL;
  /** The face of the tiny stdio fixture (logs on demand). */
  let tinyUrl: URL;
  let headers: Record<string, string>;
  const closing: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    stack = await startRunnerStack();
    const id = await createServer(stack, {
      name: uniqueName("faces"),
      command: process.execPath,
      args: [everythingEntry(), "stdio"],
    });
    const tiny = await createServer(stack, {
      name: uniqueName("faces-tiny"),
      command: process.execPath,
      args: [TINY_STDIO, "--dynamic"],
    });
    await Promise.all([reaches(stack, id, "connected", 30_000), reaches(stack, tiny, "connected")]);
    const runner = stack.runner;
    if (!runner) throw new Error("no runner");
    url = new URL(`${runner.url}/servers/${id}/mcp`);
    tinyUrl = new URL(`${runner.url}/servers/${tiny}/mcp`);
    headers = { authorization: `Bearer ${runner.token}` };
  });
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((client) => client.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await stack?.cleanup();
  });

  /** A 2026-era (SDK v2) client of the face, connected. */
  async function modern(
    options: ClientOptions = {},
    mode: "auto" | { pin: string } = { pin: "2026-07-28" },
    face = url,
  ) {
    const client = new Client(INFO, { versionNegotiation: { mode }, ...options });
    closing.push(client);
    await client.connect(new StreamableHTTPClientTransport(face, { requestInit: { headers } }));
    return client;
  }

  /** A 2025-era (SDK v1) client of the face, connected. */
  async function legacy(capabilities: ClientCapabilities = {}, face = url) {
    const client = new V1Client(INFO, { capabilities });
    const transport = new V1Transport(face, { requestInit: { headers } });
    closing.push(client);
    await client.connect(transport);
    return { client, transport };
  }

  it("a 2026-07-28 client discovers the child's server and calls its tools", async () => {
    for (const mode of [{ pin: "2026-07-28" }, "auto"] as const) {
      const client = await modern({}, mode);
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect(client.getServerVersion()).toMatchObject({ name: "mcp-servers/everything" });
      expect(client.getInstructions()).toEqual(expect.any(String));
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
      expect(client.getDiscoverResult()).toMatchObject({
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} },
        instructions: client.getInstructions(),
      });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(["echo", "trigger-elicitation-request", "trigger-sampling-request"]),
      );
      const echo = await client.callTool({ name: "echo", arguments: { message: "from 2026" } });
      expect(echo.content).toEqual([{ type: "text", text: "Echo: from 2026" }]);
      // Results pass through whole: structured content, resource links, images.
      const structured = await client.callTool({
        name: "get-structured-content",
        arguments: { location: "New York" },
      });
      expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
      const image = await client.callTool({ name: "get-tiny-image", arguments: {} });
      expect(image.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: "image" })]));
      const prompt = await client.getPrompt({ name: "simple-prompt" });
      expect(prompt.messages.length).toBeGreaterThan(0);
      // Resources, their templates, and completion are forwarded too.
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
        "demo://resource/dynamic/text/{resourceId}",
      );
      const read = await client.readResource({ uri: "demo://resource/dynamic/text/7" });
      expect(read.contents[0]).toMatchObject({
        uri: "demo://resource/dynamic/text/7",
        text: expect.any(String),
      });
      const completed = await client.complete({
        ref: { type: "ref/prompt", name: "completable-prompt" },
        argument: { name: "department", value: "E" },
      });
      expect(completed.completion.values).toEqual(["Engineering"]);
      await client.close();
    }
  });

  it("a 2025 client initializes and calls its tools, as before", async () => {
    const { client } = await legacy();
    expect(client.getServerVersion()).toMatchObject({ name: "mcp-servers/everything" });
    const echo = await client.callTool({ name: "echo", arguments: { message: "from 2025" } });
    expect(echo.content).toEqual([{ type: "text", text: "Echo: from 2025" }]);
    const read = await client.readResource({ uri: "demo://resource/dynamic/text/7" });
    expect(read.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/7" });
    const completed = await client.complete({
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "E" },
    });
    expect(completed.completion.values).toEqual(["Engineering"]);
    // A caller's ping reaches the child.
    await expect(client.ping()).resolves.toEqual({});
    // A stateless 2025 caller gets no session (GET stays 405: no standing stream).
    const get = await fetch(url, { headers: { ...headers, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
  });

  it("progress of a long call reaches a caller of either era", async () => {
    const args = { duration: 1, steps: 4 };
    const modernProgress: number[] = [];
    const client = await modern();
    const done = await client.callTool(
      { name: "trigger-long-running-operation", arguments: args },
      { onprogress: (progress) => modernProgress.push(progress.progress) },
    );
    expect(text(done)).toContain("Long running operation completed");
    expect(modernProgress).toEqual([1, 2, 3, 4]);

    const legacyProgress: number[] = [];
    const { client: old } = await legacy();
    const oldDone = await old.callTool(
      { name: "trigger-long-running-operation", arguments: args },
      CallToolResultSchema,
      { onprogress: (progress) => legacyProgress.push(progress.progress) },
    );
    expect(text(oldDone)).toContain("Long running operation completed");
    expect(legacyProgress).toEqual([1, 2, 3, 4]);
  });

  it("a 2026 caller is asked for the child's elicitation as input_required, and its retry answers it", async () => {
    const client = await modern({
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    });
    const first = await client.callTool(
      { name: "trigger-elicitation-request", arguments: {} },
      { allowInputRequired: true },
    );
    if (!isInputRequiredResult(first))
      throw new Error(`expected input_required, got ${JSON.stringify(first)}`);
    const entries = Object.entries(first.inputRequests ?? {});
    expect(entries).toHaveLength(1);
    const [key, request] = entries[0] as [string, { method: string; params: { message: string } }];
    expect(request.method).toBe("elicitation/create");
    expect(request.params.message).toContain("Please provide inputs");
    expect(first.requestState).toEqual(expect.any(String));

    // A forged or replayed state is refused; the call stays open for the real retry.
    await expect(
      client.callTool(
        {
          name: "trigger-elicitation-request",
          arguments: {},
          ...retry({ [key]: { action: "accept", content: ELICITED } }, `${first.requestState}x`),
        },
        { allowInputRequired: true },
      ),
    ).rejects.toThrow(/requestState/);

    const done = await client.callTool(
      {
        name: "trigger-elicitation-request",
        arguments: {},
        ...retry({ [key]: { action: "accept", content: ELICITED } }, first.requestState),
      },
      { allowInputRequired: true },
    );
    expect(isInputRequiredResult(done)).toBe(false);
    expect(text(done)).toContain("Name: Ada Lovelace");
    expect(text(done)).toContain("Agreed to terms: true");
  });

  it("a 2026 caller's client answers elicitation and sampling through its handlers (MRTR round trips)", async () => {
    const client = await modern({ capabilities: { elicitation: { form: {} }, sampling: {} } });
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.method);
      return { action: "accept", content: ELICITED };
    });
    client.setRequestHandler("sampling/createMessage", async (request) => {
      asked.push(request.method);
      return SAMPLED as never;
    });
    const elicited = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
    expect(text(elicited)).toContain("Name: Ada Lovelace");
    const sampled = await client.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "hello", maxTokens: 20 },
    });
    expect(text(sampled)).toContain("a sampled answer");
    expect(asked).toEqual(["elicitation/create", "sampling/createMessage"]);
  });

  it("a 2025 caller is asked for elicitation and sampling on its request's stream", async () => {
    const { client } = await legacy({ elicitation: {}, sampling: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: ELICITED };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => SAMPLED as never);
    const elicited = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
    expect(text(elicited)).toContain("Name: Ada Lovelace");
    expect(asked).toEqual([expect.stringContaining("Please provide inputs")]);
    const sampled = await client.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "hello", maxTokens: 20 },
    });
    expect(text(sampled)).toContain("a sampled answer");
  });

  it("a caller that did not declare the capability is never asked: the child gets an error", async () => {
    for (const client of [await modern(), (await legacy()).client]) {
      const result = await client.callTool({ name: "trigger-elicitation-request", arguments: {} });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("no caller can answer elicitation/create");
    }
  });

  it("a 2026 caller hears the child's log messages only when its request names a log level", async () => {
    const client = await modern({}, { pin: "2026-07-28" }, tinyUrl);
    const heard: unknown[] = [];
    client.setNotificationHandler("notifications/message", (notification) => {
      heard.push(notification.params.data);
    });
    await client.callTool({ name: "log", arguments: { message: "unasked" } });
    await client.callTool({
      name: "log",
      arguments: { message: "too fine", level: "debug" },
      _meta: { [LOG_LEVEL_META_KEY]: "info" },
    });
    await client.callTool({
      name: "log",
      arguments: { message: "asked for" },
      _meta: { [LOG_LEVEL_META_KEY]: "info" },
    });
    expect(heard).toEqual(["asked for"]);
  });

  it("a 2025 session caller hears them at the level it set", async () => {
    const { client } = await legacy({ roots: {} }, tinyUrl);
    const heard: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      heard.push(notification.params.data);
    });
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "log", arguments: { message: "below it" } });
    await client.callTool({ name: "log", arguments: { message: "at it", level: "warning" } });
    expect(heard).toEqual(["at it"]);
  });

  it("a 2025 session ends with DELETE; a face knows no other (404), and a stateless one has none (405)", async () => {
    const { client, transport } = await legacy({ elicitation: {} });
    const sessionId = transport.sessionId;
    expect(sessionId).toEqual(expect.any(String));
    expect((await client.callTool({ name: "echo", arguments: { message: "in session" } })).content).toEqual([
      { type: "text", text: "Echo: in session" },
    ]);
    await transport.terminateSession();
    const after = await fetch(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(after.status).toBe(404);
    const stateless = await fetch(url, { method: "DELETE", headers });
    expect(stateless.status).toBe(405);
    // A session is its face's only: another server's face does not know it.
    const { transport: other } = await legacy({ elicitation: {} });
    const elsewhere = await fetch(tinyUrl, {
      method: "DELETE",
      headers: { ...headers, "mcp-session-id": other.sessionId as string },
    });
    expect(elsewhere.status).toBe(404);
  });
});
