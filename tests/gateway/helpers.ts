/** Shared helpers of the data-plane (gateway) suites. */
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionPool } from "@mcpgw/upstream";
import { afterAll, beforeAll } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { createServer, reaches } from "../support/servers";
import { type Stack as StackBase, type StackOptions, startStack, waitFor } from "../support/stack";

export { parkedPort } from "../../scripts/lib/processes";
export {
  createServer,
  logLines,
  reaches,
  type StatusView,
  statusReader,
  uniqueName,
} from "../support/servers";
export { TEST_ADMIN_TOKEN };

/** A parsed JSON response body: tests index into it freely. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted on, not type-checked
export type Json = any;

/** A stack whose session pool is closed on stop (no upstream sessions outlive the suite). */
export type Stack = StackBase & {
  pool: SessionPool;
  /** A data-plane request; `headers` replace the default admin Authorization when they name one. */
  request(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<{ status: number; body: Json; headers: Headers; text: string }>;
  /** `POST /v1/tools/{name}/call` with `{arguments, chat?}`. */
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: { chat?: string; signal?: AbortSignal },
  ): Promise<{ status: number; body: Json }>;
  /** `GET /v1/tools[?chat=]` → the tools array (asserts 200). */
  listTools(
    chat?: string,
  ): Promise<Array<{ name: string; server: string; description?: string; inputSchema: Json }>>;
};

/** Starts the in-process stack with its own session pool (closed by `stop()`). */
export async function startGatewayStack(options: StackOptions = {}): Promise<Stack> {
  const pool = options.gateway?.pool ?? new SessionPool();
  const base = await startStack({ ...options, gateway: { ...options.gateway, pool } });

  async function request(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    };
    for (const [key, value] of Object.entries(headers)) if (value === "") delete headers[key];
    const response = await fetch(`${base.api.url}${path}`, {
      method,
      headers,
      ...(options.body === undefined
        ? {}
        : { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const text = await response.text();
    let body: Json;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return { status: response.status, body, headers: response.headers, text };
  }

  return {
    ...base,
    pool,
    request,
    async callTool(name, args = {}, options = {}) {
      const { status, body } = await request("POST", `/v1/tools/${encodeURIComponent(name)}/call`, {
        body: { arguments: args, ...(options.chat === undefined ? {} : { chat: options.chat }) },
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return { status, body };
    },
    async listTools(chat) {
      const { status, body } = await request(
        "GET",
        `/v1/tools${chat === undefined ? "" : `?chat=${encodeURIComponent(chat)}`}`,
      );
      if (status !== 200) throw new Error(`GET /v1/tools → ${status} ${JSON.stringify(body)}`);
      return body.tools;
    },
    async stop() {
      pool.close();
      await base.stop();
    },
  };
}

/** Creates a server and waits until it is connected (and its catalogue is visible to the data plane). */
export async function createConnected(
  stack: Stack,
  body: Record<string, unknown>,
  timeoutMs = 15_000,
): Promise<string> {
  const id = await createServer(stack, body);
  await reaches(stack, id, "connected", timeoutMs);
  // The data plane reads through its cached directory (≤ 1 s stale): wait until it offers the tools.
  const prefix = `${String(body.name)}__`;
  await waitFor(
    () => stack.listTools(),
    (tools) => tools.some((tool) => tool.name.startsWith(prefix)),
    { timeoutMs: 5_000, intervalMs: 100 },
  );
  return id;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "mcp-upstream-cli.ts");

/** The test upstream running as its own process (so it can be SIGKILLed). */
export interface UpstreamProcess {
  url: string;
  port: number;
  pid: number;
  output(): string;
  /** SIGKILL, resolved once the process has exited. */
  kill(): Promise<void>;
}

/** Starts `tests/fixtures/mcp-upstream-cli.ts` with `args`; resolves on its `listening <url>` line. */
export async function spawnUpstream(args: string[], timeoutMs = 20_000): Promise<UpstreamProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "test" },
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`upstream process did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /^listening (\S+)$/m.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`upstream process exited (code ${code}, signal ${signal}):\n${output}`));
    });
  });
  const port = Number(new URL(url).port);
  return {
    url,
    port,
    pid: child.pid as number,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Counts AWS SDK commands sent through a client, by command name (attach once per client). */
export function countAwsCalls(client: {
  middlewareStack: { add(middleware: never, options: { step: "initialize"; name?: string }): void };
}): { readonly total: number; readonly byCommand: Record<string, number>; reset(): void } {
  let byCommand: Record<string, number> = {};
  client.middlewareStack.add(
    ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: unknown) => {
        const name = context.commandName ?? "unknown";
        byCommand[name] = (byCommand[name] ?? 0) + 1;
        return next(args);
      }) as never,
    { step: "initialize", name: `countCalls-${Math.random().toString(36).slice(2)}` },
  );
  return {
    get total() {
      return Object.values(byCommand).reduce((a, b) => a + b, 0);
    },
    get byCommand() {
      return { ...byCommand };
    },
    reset() {
      byCommand = {};
    },
  };
}

/**
 * A gateway stack for the enclosing describe block (started before its tests, stopped after them), and
 * test upstreams that it closes with it. Read `stack` inside a test.
 */
export function useGatewayStack(options: StackOptions = {}) {
  let current: Stack | undefined;
  const upstreams: Upstream[] = [];
  beforeAll(async () => {
    current = await startGatewayStack(options);
  });
  afterAll(async () => {
    current?.releaseProbes();
    await current?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });
  return {
    get stack(): Stack {
      if (!current) throw new Error("the stack starts before the tests");
      return current;
    },
    async upstream(upstreamOptions: Parameters<typeof startUpstream>[0] = {}): Promise<Upstream> {
      const started = await startUpstream(upstreamOptions);
      upstreams.push(started);
      return started;
    },
  };
}
