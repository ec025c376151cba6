/**
 * Data plane — a warm `tools/call` to a 2025 streamable-HTTP upstream is sent below the SDK's client
 * (`DirectCalls`): a plain text result is read without the SDK, and every other answer (an error, an
 * image, an ask, a log line, a redirect, a stream still open, a failed request) is handed to the SDK
 * as if its own request had brought it. Against a real SDK-written upstream, each tool's outcome is
 * the same, serialised, through a session that calls directly and through one that only uses the SDK;
 * each call reaches the upstream once and nowhere else (a redirect to another origin is not followed);
 * progress on a handed-over answer resets the call's whole time; a call's log lines reach that call;
 * concurrent calls get their own answers; a call that times out or whose caller leaves is cancelled
 * at the upstream under the id it was sent with; closing the session ends its open requests. A session
 * to the deployment's own stdio runner calls directly too, through its internal fetch.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  CallFailure,
  callTool,
  createGuardedFetch,
  openSession,
  type UpstreamSession,
} from "@mcpgw/upstream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/** The first id of a direct request (DirectCalls numbers its requests from here). */
const DIRECT_ID_BASE = 2 ** 40;

interface TestUpstream {
  url: string;
  /** The ids of the `tools/call` requests received, in order. */
  readonly callIds: Array<string | number>;
  /** The request ids named by `notifications/cancelled` received. */
  readonly cancelledIds: unknown[];
  /** The ids of the `tools/call` requests whose answers are still open. */
  readonly openCalls: ReadonlySet<string | number>;
  /** Headers of the requests received. */
  readonly headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A stateful SDK upstream whose tools answer every kind of outcome a call can have. */
async function startTestUpstream(options: { json?: boolean; movedTo?: string } = {}): Promise<TestUpstream> {
  const openCalls = new Set<string | number>();
  const callIds: Array<string | number> = [];
  const cancelledIds: unknown[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sockets = new Set<Socket>();

  function mcpServer(): Server {
    const server = new Server(
      { name: "direct-test", version: "1.0.0" },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const progressToken = request.params._meta?.progressToken;
      switch (request.params.name) {
        case "text":
          return { isError: false, content: [{ type: "text", text: "hello" }], structuredContent: { n: 1 } };
        case "fail":
          return { isError: true, content: [{ type: "text", text: "boom" }] };
        case "image":
          return { content: [{ type: "image", data: "aGVsbG8=", mimeType: "image/png" }] };
        case "annotated":
          return { content: [{ type: "text", text: "a", annotations: { priority: 0.5 } }] };
        case "reject":
          throw new McpError(-32001, "nope", { detail: "refused" });
        case "progress":
          if (progressToken !== undefined)
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken, progress: 1, total: 2 },
            });
          return { content: [{ type: "text", text: "progressed" }] };
        case "log":
          await extra.sendNotification({
            method: "notifications/message",
            params: { level: "info", data: "a line" },
          });
          return { content: [{ type: "text", text: "logged" }] };
        case "ask": {
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: {
                message: "Sure?",
                requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
              },
            },
            ElicitResultSchema,
          );
          return { content: [{ type: "text", text: `asked: ${answer.action}` }] };
        }
        case "slow":
          await sleep(Number(request.params.arguments?.ms ?? 0), extra.signal);
          return { content: [{ type: "text", text: "slow done" }] };
        case "late":
          await sleep(5_000, extra.signal);
          return { content: [{ type: "text", text: "too late" }] };
        case "echo":
          return { content: [{ type: "text", text: String(request.params.arguments?.text) }] };
        case "ticks":
          // Progress at 150, 550 and 950 ms, the answer at 1,100 (its POST was held 300 ms before).
          for (const [progress, ms] of [
            [1, 150],
            [2, 400],
            [3, 400],
          ] as const) {
            await sleep(ms, extra.signal);
            if (progressToken !== undefined)
              await extra.sendNotification({
                method: "notifications/progress",
                params: { progressToken, progress },
              });
          }
          await sleep(150, extra.signal);
          return { content: [{ type: "text", text: "ticked" }] };
        default:
          throw new McpError(-32602, `no tool ${request.params.name}`);
      }
    });
    return server;
  }

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  }

  const headers: IncomingHttpHeaders[] = [];
  const http = createServer(async (req, res) => {
    headers.push(req.headers);
    // Sessions are not ended on request (a server may refuse): a client's close must end its own requests.
    if (req.method === "DELETE") {
      res.writeHead(405).end();
      return;
    }
    try {
      const body = req.method === "POST" ? await readJson(req) : undefined;
      const name = (body as { params?: { name?: unknown } } | undefined)?.params?.name;
      if (name === "moved" && options.movedTo) {
        res.writeHead(307, { location: options.movedTo }).end();
        return;
      }
      // A server slow to begin its answers: the headers of `ticks` come 300 ms late, of `late` 1 s.
      const held = name === "ticks" ? 300 : name === "late" ? 1_000 : 0;
      if (held) await new Promise((resolve) => setTimeout(resolve, held));
      for (const message of Array.isArray(body) ? body : [body]) {
        const { method, id, params } = (message ?? {}) as {
          method?: string;
          id?: string | number;
          params?: { requestId?: unknown };
        };
        if (method === "tools/call" && id !== undefined) {
          callIds.push(id);
          openCalls.add(id);
          res.on("close", () => openCalls.delete(id));
        }
        if (method === "notifications/cancelled") cancelledIds.push(params?.requestId);
      }
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (!transport && isInitializeRequest(body)) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: options.json === true,
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        await mcpServer().connect(created);
        transport = created;
      }
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  http.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    callIds,
    cancelledIds,
    headers,
    openCalls,
    close: async () => {
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

const fetch = createGuardedFetch({ allowPrivate: true });

/** A secret the upstream's target carries: it must reach nowhere but the upstream. */
const SENTINEL = `sentinel-${randomUUID()}`;

function open(upstream: TestUpstream): Promise<UpstreamSession> {
  return openSession({ url: upstream.url, headers: { "x-api-key": SENTINEL } }, { fetch, timeoutMs: 5_000 });
}

/** A call's outcome as a caller sees it: the result, or the failure's kind and message. */
async function outcome(
  session: UpstreamSession,
  tool: string,
  args: Record<string, unknown> = {},
  options: Partial<Parameters<typeof callTool>[3]> = {},
) {
  try {
    return JSON.stringify(await callTool(session, tool, args, { timeoutMs: 2_000, ...options }));
  } catch (error) {
    if (!(error instanceof CallFailure)) throw error;
    return JSON.stringify({ failure: error.kind, message: error.message });
  }
}

const TOOLS = ["text", "fail", "image", "annotated", "reject", "progress", "log", "ask", "moved", "nothing"];

describe.each([
  // On an event stream a log line and an ask come with the answer: the SDK reads those (and declines
  // the ask for a caller that cannot answer).
  {
    asked: "asked: decline",
    ticks: "ticked",
    answers: "event streams",
    json: false,
    plain: ["text", "fail"],
    handed: ["image", "reject", "log", "ask"],
  },
  // In a JSON body the answer comes alone: the log line is dropped, and the ask, sent on a session
  // stream nobody opened, goes unanswered until the call's time is up.
  {
    asked: "the tool did not answer in time",
    // Progress cannot come before a JSON body: the first window passes without any.
    ticks: "the tool did not answer in time",
    answers: "JSON bodies",
    json: true,
    plain: ["text", "fail", "log", "ask"],
    handed: ["image", "reject"],
  },
])(
  "data plane: direct tool calls, the upstream answering in $answers",
  ({ json, plain, handed, asked, ticks }) => {
    let upstream: TestUpstream;
    let elsewhere: TestUpstream;
    let direct: UpstreamSession;
    let viaSdk: UpstreamSession;

    beforeAll(async () => {
      elsewhere = await startTestUpstream();
      upstream = await startTestUpstream({ json, movedTo: elsewhere.url });
      direct = await open(upstream);
      viaSdk = await open(upstream);
      // The SDK's path alone: what the direct path must answer the same as.
      viaSdk.direct = undefined;
    });

    afterAll(async () => {
      await direct?.close();
      await viaSdk?.close();
      await upstream?.close();
      await elsewhere?.close();
    });

    it("a 2025 streamable-HTTP session calls directly; one to the deployment's own runner too, through its internal fetch", async () => {
      expect(direct.era).toBe("legacy");
      expect(direct.direct).toBeDefined();
      const refused: typeof fetch = async () => {
        throw new Error("a runner session must not use the guarded fetch");
      };
      const calls: string[] = [];
      const internalFetch: typeof fetch = (input, init) => {
        if (typeof init?.body === "string" && init.body.includes('"tools/call"')) calls.push(init.body);
        return fetch(input, init);
      };
      const internal = await openSession(
        { url: upstream.url, headers: {}, internal: true },
        { fetch: refused, internalFetch, timeoutMs: 5_000 },
      );
      const handedOver = vi.spyOn(internal.client, "requestToolCallAs");
      try {
        expect(internal.era).toBe("legacy");
        expect(internal.direct).toBeDefined();
        expect(await callTool(internal, "echo", { text: "hi" }, { timeoutMs: 2_000 })).toEqual({
          content: [{ type: "text", text: "hi" }],
          isError: false,
        });
        expect(handedOver).not.toHaveBeenCalled();
        expect(calls).toHaveLength(1);
        expect(JSON.parse(calls[0] as string).id).toBeGreaterThan(DIRECT_ID_BASE);
      } finally {
        handedOver.mockRestore();
        await internal.close();
      }
    });

    it("every tool's outcome is the same, serialised, as through the SDK alone", async () => {
      for (const tool of TOOLS) {
        const expected = await outcome(viaSdk, tool);
        expect(await outcome(direct, tool), tool).toBe(expected);
      }
      // The outcomes are of every kind (not, say, all the same failure).
      expect(await outcome(direct, "text")).toBe(
        JSON.stringify({
          content: [{ type: "text", text: "hello" }],
          structuredContent: { n: 1 },
          isError: false,
        }),
      );
      expect(JSON.parse(await outcome(direct, "reject"))).toMatchObject({ failure: "rpc" });
      expect(await outcome(direct, "ask")).toContain(asked);
      // A redirect to another origin is not followed, and the target's secret goes nowhere else.
      expect(JSON.parse(await outcome(direct, "moved"))).toMatchObject({ failure: "unreachable" });
      expect(elsewhere.headers).toHaveLength(0);
    });

    it("progress on an answer handed over resets the call's whole time, as on the SDK's own path", async () => {
      const expected = await outcome(viaSdk, "ticks", {}, { timeoutMs: 500 });
      expect(expected).toContain(ticks);
      expect(await outcome(direct, "ticks", {}, { timeoutMs: 500 })).toBe(expected);
    });

    it("a call slow to begin and silent after times out when the call's time is up, not later", async () => {
      const expected = await outcome(viaSdk, "late", {}, { timeoutMs: 1_500 });
      expect(expected).toContain("the tool did not answer in time");
      const started = performance.now();
      expect(await outcome(direct, "late", {}, { timeoutMs: 1_500 })).toBe(expected);
      // Its first window was what was left of 1.5 s when the answer began (not 1 s + a whole 1.5 s).
      expect(performance.now() - started).toBeLessThan(2_100);
    });

    it("a call's log lines reach that call, and concurrent calls each get their own answer", async () => {
      const lines: unknown[] = [];
      const context = { onLog: (params: Record<string, unknown>) => void lines.push(params) };
      const expected = await outcome(viaSdk, "log", {}, { context });
      expect(await outcome(direct, "log", {}, { context })).toBe(expected);
      // On an event stream the line came with the answer: each path told it once.
      expect(lines).toEqual(
        json
          ? []
          : [expect.objectContaining({ data: "a line" }), expect.objectContaining({ data: "a line" })],
      );
      const texts = Array.from({ length: 16 }, (_, i) => `call ${i}`);
      const answers = await Promise.all(
        texts.map((text) => callTool(direct, "echo", { text }, { timeoutMs: 2_000 })),
      );
      expect(answers.map((answer) => (answer as { content: unknown }).content)).toEqual(
        texts.map((text) => [{ type: "text", text }]),
      );
    });

    it("a plain answer is read without the SDK, any other is handed to it, and each call is sent once", async () => {
      const handedOver = vi.spyOn(direct.client, "requestToolCallAs");
      try {
        const before = upstream.callIds.length;
        for (const tool of plain) await outcome(direct, tool);
        expect(handedOver).not.toHaveBeenCalled();
        for (const tool of handed) await outcome(direct, tool);
        expect(handedOver).toHaveBeenCalledTimes(handed.length);
        // One request a call: a handed-over answer is never asked for again.
        const sent = upstream.callIds.slice(before);
        expect(sent).toHaveLength(plain.length + handed.length);
        for (const id of sent) expect(Number(id)).toBeGreaterThan(DIRECT_ID_BASE);
        expect(new Set(sent).size).toBe(sent.length);
      } finally {
        handedOver.mockRestore();
      }
    });

    it("a call past its time fails as a timeout, and the upstream is told under the id it was sent with", async () => {
      const before = upstream.callIds.length;
      const started = performance.now();
      await expect(callTool(direct, "slow", { ms: 5_000 }, { timeoutMs: 300 })).rejects.toMatchObject({
        kind: "timeout",
      });
      expect(performance.now() - started).toBeLessThan(2_000);
      const [sentId] = upstream.callIds.slice(before);
      await vi.waitFor(() => expect(upstream.cancelledIds).toContain(sentId), { timeout: 2_000 });
      // The session goes on.
      expect(await outcome(direct, "text")).toContain("hello");
    });

    it("closing the session ends a call's request still open, as closing the SDK's transport does", async () => {
      const closing = await open(upstream);
      const before = upstream.callIds.length;
      const call = callTool(closing, "slow", { ms: 10_000 }, { timeoutMs: 20_000 });
      await vi.waitFor(() => expect(upstream.callIds.length).toBe(before + 1));
      const sentId = upstream.callIds[before] as number;
      expect(upstream.openCalls.has(sentId)).toBe(true);
      const failed = expect(call).rejects.toBeInstanceOf(CallFailure);
      await closing.close();
      await failed;
      await vi.waitFor(() => expect(upstream.openCalls.has(sentId)).toBe(false), { timeout: 2_000 });
    });

    it("a caller that leaves cancels the call at the upstream", async () => {
      const before = upstream.callIds.length;
      const caller = new AbortController();
      const call = callTool(direct, "slow", { ms: 5_000 }, { timeoutMs: 10_000, signal: caller.signal });
      await vi.waitFor(() => expect(upstream.callIds.length).toBe(before + 1));
      caller.abort(new Error("gone"));
      await expect(call).rejects.toMatchObject({ kind: "cancelled" });
      const [sentId] = upstream.callIds.slice(before);
      await vi.waitFor(() => expect(upstream.cancelledIds).toContain(sentId), { timeout: 2_000 });
    });
  },
);
