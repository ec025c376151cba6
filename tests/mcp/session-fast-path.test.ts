/**
 * A 2025 session's fast path (`SessionTransport.serveRequest`) answers a client byte for byte as the
 * SDK's transport does. One recorded session — initialize, lists, plain and failing calls, an unknown
 * tool and method, progress, a log line, a call slow enough to stream, a question put to the client
 * and its answer, a call whose stream the client loses and resumes with `Last-Event-ID` while it still
 * runs, refused headers and messages, a request naming no version, a batch, a reconnect after a call
 * ended, the end — is replayed over HTTP (the gateway's Node adapter) through sessions with the fast
 * path and through sessions without it, against the same real SDK server, at two protocol versions
 * (one whose streams are resumable, one whose are not); every answer (status, headers, body) is the
 * same once the session id and each stream's random id are named in order of appearance.
 */
import {
  McpServer,
  type ServerContext,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type SessionPair, startSessionPair } from "../support/session-pair";

/** What the `held` tool waits for: released by the replay once it is ready for the answer. */
let held = latch();

function latch(): { released: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { released, release };
}

function upstreamLike(): McpServer {
  const server = new McpServer(
    { name: "fast-path-peer", version: "1.0.0" },
    { capabilities: { tools: {}, logging: {} } },
  );
  const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
  server.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text: value }) =>
    text(value),
  );
  server.registerTool("fail", {}, async () => ({ ...text("it failed"), isError: true }));
  server.registerTool("progress", {}, async (ctx: ServerContext) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined)
      for (const progress of [1, 2])
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: { progressToken, progress, total: 2 },
        });
    return text("progressed");
  });
  server.registerTool("log", {}, async (ctx: ServerContext) => {
    await ctx.mcpReq.log("info", "a line about this call");
    return text("logged");
  });
  server.registerTool("slow", {}, async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    return text("slow done");
  });
  server.registerTool("held", {}, async () => {
    await held.released;
    return text("held no more");
  });
  server.registerTool("ask", {}, async (ctx: ServerContext) => {
    const answer = await ctx.mcpReq.send({
      method: "elicitation/create",
      params: {
        mode: "form",
        message: "Which colour?",
        requestedSchema: { type: "object", properties: { colour: { type: "string" } } },
      },
    });
    return text(`answered ${JSON.stringify(answer)}`);
  });
  return server;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One client of one path: its session id once initialized, each answer read whole, and the names its
 * random ids (the session's, each stream's) get in order of appearance.
 */
class Client {
  sessionId: string | undefined;
  private readonly names = new Map<string, string>();

  constructor(
    private readonly url: string,
    readonly version: string,
  ) {}

  /** The request's headers: the session's, then `extra` (an empty value leaves that header out). */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      ...(this.sessionId ? { "mcp-session-id": this.sessionId, "mcp-protocol-version": this.version } : {}),
      ...extra,
    };
    return Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== ""));
  }

  /**
   * Sends a request; `during` runs on its body so far as each chunk arrives (to answer a question) and,
   * when it returns true, the client drops the answer there (a lost connection).
   */
  async send(
    method: string,
    body: unknown,
    extra: Record<string, string> = {},
    during?: (sofar: string) => unknown,
    onHeaders?: () => void,
  ): Promise<Answer> {
    const dropped = new AbortController();
    const response = await fetch(this.url, {
      method,
      headers: this.headers(extra),
      signal: dropped.signal,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    this.sessionId ??= response.headers.get("mcp-session-id") ?? undefined;
    onHeaders?.();
    let text = "";
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body ?? []) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        if ((await during?.(text)) === true) {
          dropped.abort();
          break;
        }
      }
    } catch (error) {
      if (!dropped.signal.aborted) throw error;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of response.headers) if (name !== "date") headers[name] = this.named(value);
    return { status: response.status, headers, body: this.named(text) };
  }

  /** `text` with the session id and every stream id in it replaced by its name. */
  named(text: string): string {
    let named = this.sessionId ? text.replaceAll(this.sessionId, "<session>") : text;
    named = named.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!this.names.has(id)) this.names.set(id, `<stream ${this.names.size + 1}>`);
      return this.names.get(id) as string;
    });
    return named;
  }

  /** The real id behind a name (to reconnect with `Last-Event-ID`). */
  real(named: string): string {
    for (const [id, name] of this.names) named = named.replaceAll(name, id);
    return named;
  }
}

const call = (
  id: number,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

/** Whether a protocol version's streams open with an event to resume from. */
function resumable(version: string): boolean {
  return version >= "2025-11-25";
}

/** The recorded session, replayed by `client`: every answer, in order. */
async function replay(client: Client): Promise<Answer[]> {
  const answers: Answer[] = [];
  const post = async (body: unknown, extra?: Record<string, string>) => {
    answers.push(await client.send("POST", body, extra));
  };
  await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: client.version,
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: "replayer", version: "1.0.0" },
    },
  });
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  await post({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  await post(call(2, "echo", { text: "hello" }));
  await post(call(3, "fail"));
  await post(call(4, "no-such-tool"));
  await post(call(5, "echo", { text: 42 }));
  await post({ jsonrpc: "2.0", id: 6, method: "no/such-method", params: {} });
  await post({ jsonrpc: "2.0", id: "seven", method: "ping" });
  await post(call(8, "progress", {}, { progressToken: "p-8" }));
  await post(call(9, "log"));
  await post(call(10, "slow"));
  // A call whose stream the client loses once it began: it reconnects from the stream's first event,
  // while the call still runs (it answers only once the reconnect is there), and reads the rest there.
  // A version whose streams cannot be resumed just gets the answer.
  held = latch();
  if (!resumable(client.version)) held.release();
  const lost = await client.send("POST", call(20, "held"), {}, (sofar) => sofar.includes("\n\n"));
  answers.push(lost);
  const resumeFrom = /^id: (.+)$/m.exec(lost.body)?.[1];
  // Time for the server to notice the dropped connection (the SDK refuses a second one to a live stream).
  await new Promise((resolve) => setTimeout(resolve, 500));
  answers.push(
    await client.send(
      "GET",
      undefined,
      { "last-event-id": client.real(resumeFrom ?? "none") },
      undefined,
      () => held.release(),
    ),
  );
  held.release();
  // A question put to the client mid-call: it answers on a POST of its own, and the call ends.
  let answered = false;
  answers.push(
    await client.send("POST", call(11, "ask"), {}, async (sofar) => {
      const asked = /data: (\{.*"elicitation\/create".*\})\n/.exec(sofar);
      if (!asked || answered) return;
      answered = true;
      const question = JSON.parse(asked[1] as string) as { id: number };
      const reply = {
        jsonrpc: "2.0",
        id: question.id,
        result: { action: "accept", content: { colour: "teal" } },
      };
      answers.push(await client.send("POST", reply));
    }),
  );
  // Refused as the SDK refuses them: an unknown protocol version, a message it does not take, no session.
  await post(call(12, "echo", { text: "x" }), { "mcp-protocol-version": "1999-01-01" });
  await post({ ...call(13, "echo", { text: "x" }), extra: true });
  await post(call(14, "echo", { text: "x" }), { accept: "application/json" });
  await post([call(15, "echo", { text: "a" }), call(16, "echo", { text: "b" })]);
  await post(call(18, "echo", { text: "no version named" }), { "mcp-protocol-version": "" });
  // A reconnect to the slow call's stream, after its first event: the rest of it again.
  const slow = answers.find(({ body }) => body.includes("slow done")) as Answer;
  const primed = /id: (.+)\nretry/.exec(slow.body)?.[1];
  answers.push(await client.send("GET", undefined, { "last-event-id": client.real(primed ?? "none") }));
  answers.push(await client.send("DELETE", undefined));
  await post(call(17, "echo", { text: "after the end" }));
  return answers;
}

describe("a 2025 session's fast path", () => {
  let pair: SessionPair;

  beforeAll(async () => {
    pair = await startSessionPair(() => upstreamLike().server);
  });

  afterAll(async () => {
    await pair?.close();
  });

  it.each([
    ["2025-11-25", true],
    ["2025-06-18", false],
  ])(
    "answers a replayed %s session byte for byte as the SDK's transport does",
    async (version, resumable) => {
      const fast = new Client(`${pair.origin}/fast/mcp`, version);
      const sdk = new Client(`${pair.origin}/sdk/mcp`, version);
      const bySdk = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");
      const throughFast = await replay(fast);
      const sdkServedOfFast = bySdk.mock.calls.length;
      bySdk.mockClear();
      const throughSdk = await replay(sdk);
      const sdkServedOfSdk = bySdk.mock.calls.length;
      bySdk.mockRestore();
      // The thirteen single requests on the live session (lists, calls, ping, an unknown method, one
      // naming no version) took the fast path; the rest (initialize, notifications, answers, refusals,
      // the batch, GETs, DELETE) the SDK's.
      expect(sdkServedOfSdk - sdkServedOfFast).toBe(13);
      expect(throughFast).toHaveLength(throughSdk.length);
      for (const [index, answer] of throughSdk.entries())
        expect(throughFast[index], `answer ${index}`).toEqual(answer);
      // What was replayed is what it claims: answers, errors, streams and refusals, not one kind.
      const bodies = throughSdk.map(({ body }) => body);
      expect(bodies[3]).toContain('"text":"hello"');
      expect(bodies[9]).toContain('"progress":2');
      expect(bodies[10]).toContain("a line about this call");
      expect(bodies[11]).toContain("slow done");
      // The lost call: dropped after its first event, its answer read on the reconnect. A reconnect after
      // the slow call ended reads its answer again.
      if (resumable) {
        expect(bodies[12]).not.toContain("held no more");
        expect(bodies[13]).toContain("held no more");
        expect(bodies.filter((body) => body.includes("slow done"))).toHaveLength(2);
      }
      expect(bodies.join("\n")).toContain("answered");
      expect(bodies.join("\n")).toContain("no version named");
      expect(throughSdk.map(({ status }) => status)).toEqual(
        expect.arrayContaining([200, 202, 400, 404, 406]),
      );
    },
    30_000,
  );
});
