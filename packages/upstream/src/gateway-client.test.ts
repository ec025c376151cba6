import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { ProtocolError } from "@modelcontextprotocol/client";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { asComplete, GatewayClient, withScrubbedData } from "./gateway-client";

/** A 2025 upstream in this process whose tools/call answers whatever `answer` says, and a client of it. */
async function connected(answer: (name: string) => Record<string, unknown>) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new Server({ name: "linked", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, (request) => answer(request.params.name) as never);
  await server.connect(serverSide);
  const client = new GatewayClient({ name: "test", version: "1" });
  await client.connect(clientSide);
  closers.push(() => client.close());
  return client;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/**
 * An upstream that does not check its own answers (the SDK's Server would): JSON-RPC over the SDK's
 * in-memory transport, answering initialize as a 2025 server and tools/call with `answer` — followed
 * by what `after` makes of the call's params (a notification), if anything.
 */
async function connectedToUnchecked(
  answer: Record<string, unknown>,
  after?: (params: { _meta?: { progressToken?: unknown } }) => JSONRPCMessage | undefined,
) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  serverSide.onmessage = (message) => {
    const { id, method, params } = message as {
      id?: number;
      method?: string;
      params?: { protocolVersion?: string; _meta?: { progressToken?: unknown } };
    };
    if (id === undefined) return;
    const result =
      method === "initialize"
        ? {
            protocolVersion: params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "raw", version: "1" },
          }
        : answer;
    void serverSide.send({ jsonrpc: "2.0", id, result } as never);
    const then = method === "tools/call" ? after?.(params ?? {}) : undefined;
    if (then) void serverSide.send(then);
  };
  await serverSide.start();
  const client = new GatewayClient({ name: "test", version: "1" });
  await client.connect(clientSide);
  closers.push(() => client.close());
  return client;
}

describe("GatewayClient.requestToolCall", () => {
  it("answers what request() answers: the result as the era's codec validates it", async () => {
    const client = await connected(() => ({
      content: [{ type: "text", text: "hi" }],
      structuredContent: { n: 1 },
    }));

    const result = await client.requestToolCall({ name: "good", arguments: {} });

    expect(result).toEqual(
      await client.request({ method: "tools/call", params: { name: "good", arguments: {} } }),
    );
    expect(result).toMatchObject({ content: [{ type: "text", text: "hi" }], structuredContent: { n: 1 } });
  });

  it("refuses a result that is no tools/call result with request()'s own words", async () => {
    const client = await connectedToUnchecked({ content: "not a list" });

    const refused = await client.requestToolCall({ name: "bad" }).catch((error: Error) => error);
    const refusedToo = await client
      .request({ method: "tools/call", params: { name: "bad" } })
      .catch((error: Error) => error);

    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain("Invalid result for tools/call");
    expect((refused as Error).message).toBe((refusedToo as Error).message);
  });
});

describe("asComplete", () => {
  const response = (result: Record<string, unknown>) => ({ jsonrpc: "2.0" as const, id: 1, result });

  it("reads a result without resultType as complete", () => {
    expect(asComplete(response({ content: [] }))).toEqual(response({ content: [], resultType: "complete" }));
  });

  it("leaves a result that names its type, or holds what only another kind does, as sent", () => {
    for (const result of [
      { content: [], resultType: "complete" },
      { resultType: "input_required", requestState: "s" },
      { inputRequests: {} },
      { requestState: "s" },
      { task: { taskId: "t" } },
    ]) {
      expect(asComplete(response(result))).toEqual(response(result));
    }
  });
});

/**
 * A 2025 upstream that answers a tools/call with `count` progress notifications and then the result,
 * all handed to the client in one synchronous run — as the SDK's HTTP transport hands over the
 * messages of one JSON batch (or of an event stream that arrived whole).
 */
function batchingTransport(count: number): Transport {
  const transport: Transport = {
    async start() {},
    async close() {
      transport.onclose?.();
    },
    async send(message) {
      const { id, method, params } = message as {
        id?: number;
        method?: string;
        params?: { protocolVersion?: string; _meta?: { progressToken?: number } };
      };
      if (id === undefined) return;
      const progressToken = params?._meta?.progressToken;
      const batch: JSONRPCMessage[] =
        method === "initialize"
          ? [
              {
                jsonrpc: "2.0",
                id,
                result: {
                  protocolVersion: params?.protocolVersion,
                  capabilities: { tools: {} },
                  serverInfo: { name: "batching", version: "1" },
                },
              },
            ]
          : [
              ...Array.from({ length: count }, (_, step) => ({
                jsonrpc: "2.0" as const,
                method: "notifications/progress",
                params: { progressToken, progress: step + 1, total: count },
              })),
              { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } },
            ];
      queueMicrotask(() => {
        for (const one of batch) transport.onmessage?.(one);
      });
    },
  };
  return transport;
}

describe("GatewayClient: a response and the notifications before it in one batch", () => {
  it("tells the request of every progress notification, in order, before it settles", async () => {
    const client = new GatewayClient({ name: "test", version: "1" });
    await client.connect(batchingTransport(3));
    closers.push(() => client.close());
    const seen: string[] = [];

    const result = await client.requestToolCall(
      { name: "burst", arguments: {} },
      { onprogress: ({ progress, total }) => seen.push(`${progress}/${total}`) },
    );
    seen.push("result");

    expect(result).toMatchObject({ content: [{ type: "text", text: "done" }] });
    expect(seen).toEqual(["1/3", "2/3", "3/3", "result"]);
  });
});

describe("withScrubbedData", () => {
  const secret = "sk-live-0123456789abcdef";

  it("scrubs the credentials an upstream echoes anywhere in its error data", () => {
    const error = new ProtocolError(-32042, "open the link", {
      elicitations: [{ mode: "url", url: `https://up.example/auth?token=${secret}`, elicitationId: "e1" }],
      echoed: { authorization: `Bearer ${secret}` },
    });

    const scrubbed = withScrubbedData(error, [`Bearer ${secret}`]);

    expect(JSON.stringify(scrubbed.data)).not.toContain(secret);
    expect(scrubbed).toMatchObject({ code: -32042, message: error.message });
    expect(scrubbed.data).toMatchObject({ elicitations: [{ elicitationId: "e1" }], echoed: {} });
  });

  it("keeps an error whose data holds no credential as it is", () => {
    const error = new ProtocolError(-32099, "no", { detail: "nothing secret" });

    expect(withScrubbedData(error, [`Bearer ${secret}`])).toBe(error);
    expect(withScrubbedData(new ProtocolError(-32099, "no"), [secret]).data).toBeUndefined();
  });
});

describe("GatewayClient.listenProgress", () => {
  /** A 2025 upstream that answers tools/call at once, then tells progress on the call's token. */
  function connectedToLateProgress() {
    return connectedToUnchecked({ content: [] }, (params) => {
      const progressToken = params._meta?.progressToken;
      if (progressToken === undefined) return undefined;
      return {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken, progress: 1, total: 2 },
      } as JSONRPCMessage;
    });
  }

  it("hears progress on its own token after the request that carried it was answered, until released", async () => {
    const client = await connectedToLateProgress();
    const heard: unknown[] = [];
    const listening = client.listenProgress((params) => heard.push(params));
    await client.requestObject({
      method: "tools/call",
      params: { name: "t", _meta: { progressToken: listening.token } },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([{ progressToken: listening.token, progress: 1, total: 2 }]);

    listening.release();
    await client.requestObject({
      method: "tools/call",
      params: { name: "t", _meta: { progressToken: listening.token } },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toHaveLength(1);
  });

  it("leaves progress on the SDK's own tokens to the SDK", async () => {
    const client = await connectedToLateProgress();
    const heard: unknown[] = [];
    client.listenProgress((params) => heard.push(params));
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.requestObject(
      { method: "tools/call", params: { name: "t" } },
      { onprogress: () => undefined },
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([]);
    // The SDK's handler heard it (the request was answered: it names an unknown token).
    expect(errors.map((error) => error.message).join()).toMatch(/unknown token/);
  });
});
