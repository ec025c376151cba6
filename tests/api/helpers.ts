/** Shared helpers for the Admin API suites: problem+json checks, job-queue reads, fixtures. */
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import type { Job } from "@mcpgw/core";
import { expect } from "vitest";
import { createTestApp } from "../support/app";

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;
export type Store = TestApp["store"];
export type Json = Record<string, unknown>;

/** Markers of a stack trace or source location leaking into a response. */
const STACK_TRACE = /\n\s+at\s|\bat\s+\S+\s+\(|\.(?:ts|js|mjs):\d+:\d+|node_modules|file:\/\/\//;

/** A fresh app (own table, queue and key alias) for one test. */
export function freshApp(options?: Parameters<typeof createTestApp>[0]): Promise<TestApp> {
  return createTestApp(options);
}

/** Asserts a response is a problem+json of `status`/`code` with the required members; returns its body. */
export async function expectProblem(response: Response, status: number, code?: string): Promise<Json> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(text) as Json;
  expect(body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    code: code ?? expect.stringMatching(/^[a-z_]+(\.[a-z_]+)*$/),
  });
  expect(text).not.toMatch(STACK_TRACE);
  expect(body).not.toHaveProperty("stack");
  return body;
}

/** Asserts a JSON response of `status` and returns its body. */
export async function expectJson<T = Json>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  expect(text).not.toMatch(STACK_TRACE);
  return JSON.parse(text) as T;
}

/**
 * Receives (and deletes) every job currently on the store's queue. The emulator answers a short poll
 * with everything visible, so an empty answer means nothing was enqueued — no waiting needed.
 */
export async function takeJobs(store: Store): Promise<Job[]> {
  const queueUrl = await store.jobs.url();
  const jobs: Job[] = [];
  for (;;) {
    const { Messages = [] } = await store.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) return jobs;
    for (const message of Messages) jobs.push(JSON.parse(message.Body ?? "null") as Job);
    await store.clients.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle ?? "",
        })),
      }),
    );
  }
}

/** A public HTTP server body (hostnames pass the static URL check; nothing is ever contacted). */
export function httpServer(name: string, extra: Json = {}): Json {
  return { name, url: `https://${name}.example.com/mcp`, ...extra };
}

/** A stdio server body. */
export function stdioServer(name: string, extra: Json = {}): Json {
  return { name, command: "npx", args: ["-y", `@example/${name}`], ...extra };
}

/** Creates a server through the API and returns its view; fails the test on anything but 201. */
export async function createServer(
  app: TestApp,
  body: Json,
): Promise<Json & { id: string; version: number }> {
  return expectJson(await app.call("POST", "/v1/servers", body), 201);
}
