/** Shared helpers of the connection-lifecycle suites. */
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Stack } from "../support/stack";
import { waitFor } from "../support/stack";

/** The status part of `GET /v1/servers/{id}`. */
export interface StatusView {
  state: "connecting" | "connected" | "failed" | "disabled";
  reason: string | null;
  error: string | null;
  toolCount: number;
  lastConnectionAttemptAt: string | null;
  lastSuccessfulConnectionAt: string | null;
  lastConnectionFailureAt: string | null;
  lastConnectionLatencyMs: number | null;
  lastError: string | null;
}

/** Reads a server's status through the admin API (throws on a non-200). */
export function statusReader(stack: Stack, id: string): () => Promise<StatusView> {
  return async () => {
    const response = await stack.call("GET", `/v1/servers/${id}`);
    if (response.status !== 200)
      throw new Error(`GET /v1/servers/${id} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.status as StatusView;
  };
}

/** Waits until the server leaves `connecting`, and returns that status. */
export function settled(stack: Stack, id: string, timeoutMs = 15_000): Promise<StatusView> {
  return waitFor(statusReader(stack, id), (s) => s.state !== "connecting", { timeoutMs });
}

/** Waits until the server is in `state`. */
export function reaches(
  stack: Stack,
  id: string,
  state: StatusView["state"],
  timeoutMs = 15_000,
): Promise<StatusView> {
  return waitFor(statusReader(stack, id), (s) => s.state === state, { timeoutMs, intervalMs: 200 });
}

/** Creates a server through the admin API and returns its id (asserting 201). */
export async function createServer(stack: Stack, body: Record<string, unknown>): Promise<string> {
  const created = await stack.call("POST", "/v1/servers", body);
  if (created.status !== 201) throw new Error(`create → ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

/** A unique-enough server name for one test. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Parsed log lines (the stack captures JSON lines). */
export function logLines(stack: Stack): Array<Record<string, unknown>> {
  return stack.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * A port that is free now and outside the kernel's ephemeral range, so no `listen(0)` elsewhere in
 * the run can be handed it while a test keeps it closed on purpose (closed-port / restart tests).
 */
export async function parkedPort(): Promise<number> {
  let low = 32_768;
  try {
    const [first] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    if (first && Number(first) > 12_000) low = Number(first);
  } catch {
    // not Linux: keep the IANA default
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await isFree(port)) return port;
  }
  throw new Error("no free port below the ephemeral range");
}

async function isFree(port: number): Promise<boolean> {
  const server = createNetServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** An HTTP server on 127.0.0.1 that answers every request with a 302 to `location`. */
export interface Redirector {
  url: string;
  readonly requests: number;
  close(): Promise<void>;
}

export async function startRedirector(location: string): Promise<Redirector> {
  let requests = 0;
  const server: Server = createHttpServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(302, { location }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Receives (and deletes) every message currently visible on a queue, until one empty long poll. */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
  waitSeconds = 1,
): Promise<Array<{ body: string; attributes: Record<string, string> }>> {
  const all: Array<{ body: string; attributes: Record<string, string> }> = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) return all;
    for (const message of Messages)
      all.push({
        body: message.Body ?? "",
        attributes: (message.Attributes ?? {}) as Record<string, string>,
      });
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}
