/**
 * MCP clients for the end-to-end tests of both protocol eras, each connected with a bearer key and each
 * answering what a server may ask of it the same fixed way:
 *
 * - form elicitation: accept, with an answer built from the requested schema (every field: its default,
 *   else the first enum or `const` choice, else a fixed value per type — strings are "yes", so a "confirm"
 *   tool answers "confirmed: yes"); URL elicitation: accept;
 * - sampling: a fixed model ({@link SAMPLING_MODEL}) whose answer echoes the prompt (`echo: <last user text>`);
 * - roots: one root, {@link TEST_ROOT}.
 *
 * They also collect what arrives besides results: progress notifications per call, and
 * `notifications/tools/list_changed` — through `subscriptions/listen` on a 2026-07-28 connection, through
 * the session's GET stream on a 2025 one.
 *
 * Three flavours: SDK v2 pinned to 2026-07-28 (`v2-modern`), SDK v2 negotiating (`v2-auto`: discover,
 * else initialize), and SDK v1 (`v1`: 2025-11-25 and before).
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The model name every test client's sampling answer carries. */
export const SAMPLING_MODEL = "gateway-e2e-model";
/** The one root every test client lists. */
export const TEST_ROOT = { uri: "file:///workspace/e2e", name: "e2e workspace" };
/** The fixed answer to a free-text (string) form field. */
export const FORM_TEXT_ANSWER = "yes";

export type ClientFlavour = "v2-modern" | "v2-auto" | "v1";

/** A tool result as both SDKs return it (content blocks are left loose). */
export interface ToolResult {
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** One `notifications/progress` of a call. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** A tool call's result and the progress notifications that arrived for it. */
export interface CallOutcome {
  result: ToolResult;
  progress: ProgressUpdate[];
}

/** What the client was asked and what it answered. */
export interface Asked {
  method: "elicitation/create" | "sampling/createMessage" | "roots/list";
  params: Record<string, unknown>;
  answer: Record<string, unknown>;
}

/** A connected test client, whichever SDK and era. */
export interface TestClient {
  readonly flavour: ClientFlavour;
  /** `modern` = 2026-07-28 (per-request envelope, no session), `legacy` = a 2025 session. */
  readonly era: "modern" | "legacy";
  readonly protocolVersion: string | undefined;
  /** Every elicitation, sampling and roots request this client answered, in order. */
  readonly asked: readonly Asked[];
  /** `notifications/tools/list_changed` received so far. */
  readonly toolsListChanged: number;
  listTools(): Promise<Array<{ name: string; [key: string]: unknown }>>;
  /** The first page of resources (`resources/list`). */
  listResources(): Promise<Array<{ uri: string; name: string; [key: string]: unknown }>>;
  /** `resources/read` → its contents. */
  readResource(uri: string): Promise<Array<{ uri: string; mimeType?: string; [key: string]: unknown }>>;
  /** The first page of prompts (`prompts/list`). */
  listPrompts(): Promise<Array<{ name: string; [key: string]: unknown }>>;
  /** `prompts/get` → its result. */
  getPrompt(
    name: string,
    args?: Record<string, string>,
  ): Promise<{ messages: Array<{ role: string; content: unknown }>; [key: string]: unknown }>;
  /** Calls a tool with a progress token; `meta` is merged into the request's `_meta`. */
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: { timeoutMs?: number; meta?: Record<string, unknown> },
  ): Promise<CallOutcome>;
  /**
   * Starts receiving `notifications/tools/list_changed`: a `subscriptions/listen` stream on 2026-07-28;
   * on a 2025 session the GET stream the transport opens after `initialize` carries them (nothing to do,
   * but it opens asynchronously: re-trigger until heard).
   */
  watchToolsListChanged(): Promise<void>;
  /** Resolves once `toolsListChanged` reaches `count`; rejects after `timeoutMs`. */
  waitForToolsListChanged(count?: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link connectTestClient}. */
export interface ConnectOptions {
  /** The bearer key (`Authorization: Bearer <key>`); omitted for a direct upstream without auth. */
  key?: string;
  /** More request headers. */
  headers?: Record<string, string>;
  /** Bounds `connect` and each call (default 10 s). */
  timeoutMs?: number;
  /** Leaves `roots` out of the client's capabilities (and answers no `roots/list`). */
  noRoots?: boolean;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const CLIENT_INFO = { name: "mcp-gateway-e2e", version: "1.0.0" };

type JsonSchema = Record<string, unknown>;

function firstChoice(schema: JsonSchema): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ["oneOf", "anyOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return (options[0] as JsonSchema).const;
  }
  return undefined;
}

function withinBounds(value: number, schema: JsonSchema): number {
  const min = typeof schema.minimum === "number" ? schema.minimum : value;
  const max = typeof schema.maximum === "number" ? schema.maximum : value;
  return Math.min(Math.max(value, min), max);
}

const FORMATTED: Record<string, string> = {
  email: "e2e@example.com",
  uri: "https://example.com/e2e",
  date: "2000-01-01",
  "date-time": "2000-01-01T00:00:00Z",
};

/** The fixed answer to one form field. */
function fieldAnswer(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return schema.default;
  const choice = firstChoice(schema);
  switch (schema.type) {
    case "boolean":
      return true;
    case "integer":
      return withinBounds(42, schema);
    case "number":
      return withinBounds(4.2, schema);
    case "array": {
      const item = firstChoice((schema.items ?? {}) as JsonSchema);
      return item === undefined ? [] : [item];
    }
    default:
      if (choice !== undefined) return choice;
      return FORMATTED[String(schema.format)] ?? FORM_TEXT_ANSWER;
  }
}

/** The fixed answer to a form elicitation: every requested field filled (see the module comment). */
export function formAnswer(requestedSchema: unknown): Record<string, unknown> {
  const properties = ((requestedSchema ?? {}) as JsonSchema).properties ?? {};
  return Object.fromEntries(
    Object.entries(properties as Record<string, JsonSchema>).map(([field, schema]) => [
      field,
      fieldAnswer(schema),
    ]),
  );
}

/** The fixed answer to an elicitation: accept (with {@link formAnswer} for a form). */
export function elicitationAnswer(params: Record<string, unknown>): Record<string, unknown> {
  if (params.mode === "url") return { action: "accept" };
  return { action: "accept", content: formAnswer(params.requestedSchema) };
}

/** The fixed model answer: `echo: <text of the last user message>`. */
export function samplingAnswer(params: Record<string, unknown>): Record<string, unknown> {
  const messages = (params.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((message) => message.role === "user");
  const blocks = (Array.isArray(last?.content) ? last.content : [last?.content]) as Array<{ text?: string }>;
  const prompt = blocks.map((block) => block?.text ?? "").join(" ");
  return {
    role: "assistant",
    model: SAMPLING_MODEL,
    content: { type: "text", text: `echo: ${prompt}` },
    stopReason: "endTurn",
  };
}

/** The text blocks of a tool result, joined with newlines. */
export function textOf(result: ToolResult): string {
  return result.content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

function requestInit(options: ConnectOptions): RequestInit {
  return {
    headers: {
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
      ...options.headers,
    },
  };
}

/** Counts list_changed notifications and lets a test wait for them. */
function listChangedCounter() {
  let count = 0;
  const waiters = new Set<() => void>();
  return {
    get count() {
      return count;
    },
    bump() {
      count++;
      for (const wake of waiters) wake();
    },
    wait(target: number, timeoutMs: number, label: string): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (count < target) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${label}: ${count} of ${target} tools/list_changed within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

const CAPABILITIES = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  roots: { listChanged: false },
};

/** The capabilities a test client declares: all of {@link CAPABILITIES}, or all but roots. */
function capabilitiesOf(options: ConnectOptions) {
  if (!options.noRoots) return CAPABILITIES;
  const { roots: _roots, ...rest } = CAPABILITIES;
  return rest;
}

async function connectV2(url: string, flavour: "v2-modern" | "v2-auto", options: ConnectOptions) {
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const asked: Asked[] = [];
  const listChanged = listChangedCounter();
  const client = new ClientV2(CLIENT_INFO, {
    capabilities: capabilitiesOf(options),
    versionNegotiation: { mode: flavour === "v2-modern" ? { pin: "2026-07-28" } : "auto" },
  });
  client.setRequestHandler("elicitation/create", (request) => {
    const params = request.params as Record<string, unknown>;
    const answer = elicitationAnswer(params);
    asked.push({ method: "elicitation/create", params, answer });
    return answer as { action: "accept" };
  });
  client.setRequestHandler("sampling/createMessage", (request) => {
    const params = request.params as Record<string, unknown>;
    const answer = samplingAnswer(params);
    asked.push({ method: "sampling/createMessage", params, answer });
    return answer as { role: "assistant"; model: string; content: { type: "text"; text: string } };
  });
  if (!options.noRoots)
    client.setRequestHandler("roots/list", () => {
      const answer = { roots: [TEST_ROOT] };
      asked.push({ method: "roots/list", params: {}, answer });
      return answer;
    });
  client.setNotificationHandler("notifications/tools/list_changed", () => listChanged.bump());
  await client.connect(new TransportV2(new URL(url), { requestInit: requestInit(options) }), { timeout });
  const subscriptions: Array<{ close(): Promise<void> }> = [];
  const era = client.getProtocolEra() === "modern" ? "modern" : "legacy";

  const testClient: TestClient = {
    flavour,
    era,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    asked,
    get toolsListChanged() {
      return listChanged.count;
    },
    async listTools() {
      return (await client.listTools(undefined, { timeout })).tools;
    },
    async listResources() {
      return (await client.listResources(undefined, { timeout })).resources;
    },
    async readResource(uri) {
      return (await client.readResource({ uri }, { timeout })).contents;
    },
    async listPrompts() {
      return (await client.listPrompts(undefined, { timeout })).prompts;
    },
    async getPrompt(name, args) {
      return client.getPrompt({ name, ...(args ? { arguments: args } : {}) }, { timeout });
    },
    async callTool(name, args = {}, callOptions = {}) {
      const progress: ProgressUpdate[] = [];
      const result = await client.callTool(
        { name, arguments: args, ...(callOptions.meta ? { _meta: callOptions.meta } : {}) },
        {
          timeout: callOptions.timeoutMs ?? timeout,
          resetTimeoutOnProgress: true,
          onprogress: ({ progress: done, total, message }) =>
            progress.push({
              progress: done,
              ...(total === undefined ? {} : { total }),
              ...(message ? { message } : {}),
            }),
        },
      );
      return { result: result as ToolResult, progress };
    },
    async watchToolsListChanged() {
      if (era === "modern") subscriptions.push(await client.listen({ toolsListChanged: true }, { timeout }));
    },
    waitForToolsListChanged(count = 1, timeoutMs = 5_000) {
      return listChanged.wait(count, timeoutMs, flavour);
    },
    async close() {
      await Promise.allSettled(subscriptions.map((subscription) => subscription.close()));
      await client.close();
    },
  };
  return testClient;
}

async function connectV1(url: string, options: ConnectOptions): Promise<TestClient> {
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const asked: Asked[] = [];
  const listChanged = listChangedCounter();
  const client = new ClientV1(CLIENT_INFO, { capabilities: capabilitiesOf(options) });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    const params = request.params as Record<string, unknown>;
    const answer = elicitationAnswer(params);
    asked.push({ method: "elicitation/create", params, answer });
    return answer as { action: "accept" };
  });
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    const params = request.params as Record<string, unknown>;
    const answer = samplingAnswer(params);
    asked.push({ method: "sampling/createMessage", params, answer });
    return answer as { role: "assistant"; model: string; content: { type: "text"; text: string } };
  });
  if (!options.noRoots)
    client.setRequestHandler(ListRootsRequestSchema, () => {
      const answer = { roots: [TEST_ROOT] };
      asked.push({ method: "roots/list", params: {}, answer });
      return answer;
    });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged.bump());
  const transport = new TransportV1(new URL(url), { requestInit: requestInit(options) });
  await client.connect(transport, { timeout });

  return {
    flavour: "v1",
    era: "legacy",
    get protocolVersion() {
      return transport.protocolVersion;
    },
    asked,
    get toolsListChanged() {
      return listChanged.count;
    },
    async listTools() {
      return (await client.listTools(undefined, { timeout })).tools;
    },
    async listResources() {
      return (await client.listResources(undefined, { timeout })).resources;
    },
    async readResource(uri) {
      return (await client.readResource({ uri }, { timeout })).contents;
    },
    async listPrompts() {
      return (await client.listPrompts(undefined, { timeout })).prompts;
    },
    async getPrompt(name, args) {
      return client.getPrompt({ name, ...(args ? { arguments: args } : {}) }, { timeout });
    },
    async callTool(name, args = {}, callOptions = {}) {
      const progress: ProgressUpdate[] = [];
      const result = await client.callTool(
        { name, arguments: args, ...(callOptions.meta ? { _meta: callOptions.meta } : {}) },
        undefined,
        {
          timeout: callOptions.timeoutMs ?? timeout,
          resetTimeoutOnProgress: true,
          onprogress: ({ progress: done, total, message }) =>
            progress.push({
              progress: done,
              ...(total === undefined ? {} : { total }),
              ...(message ? { message } : {}),
            }),
        },
      );
      return { result: result as ToolResult, progress };
    },
    async watchToolsListChanged() {
      // The transport opens the session's GET stream itself once initialized; it carries list_changed.
    },
    waitForToolsListChanged(count = 1, timeoutMs = 5_000) {
      return listChanged.wait(count, timeoutMs, "v1");
    },
    async close() {
      await client.close();
    },
  };
}

/**
 * Connects a test client of `flavour` to an MCP endpoint (a gateway's `/mcp` or `/mcp/{server}`, or an
 * upstream directly); always `close()` it.
 */
export function connectTestClient(
  flavour: ClientFlavour,
  url: string,
  options: ConnectOptions = {},
): Promise<TestClient> {
  return flavour === "v1" ? connectV1(url, options) : connectV2(url, flavour, options);
}
