/**
 * Registering many servers at once never fails on an emulator answer that cannot be parsed: 300
 * `POST /v1/servers`, eight at a time, all 201 — though DynamoDB's answers to one transaction in ten
 * arrive cut short (a real proxy in front of the emulator truncates them after the emulator has
 * committed), as an overloaded emulator's answers did. The SDK tries such an answer again, and the
 * transaction's ClientRequestToken makes the retry of a committed one a success, not a clash with its
 * own writes. Each server then exists exactly once.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "@mcpgw/api";
import { createStore } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { createTestConfig } from "../support/aws";

const CREATES = 300;
const CONCURRENCY = 8;
/** One TransactWriteItems answer in this many is cut short. */
const CUT_EVERY = 10;

/** A proxy to `target` that truncates every `CUT_EVERY`th TransactWriteItems answer (status 200, half its body). */
async function startCuttingProxy(target: string) {
  let transactions = 0;
  let cut = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", target);
      const forward = httpRequest(
        url,
        { method: req.method, headers: req.headers },
        (answer: IncomingMessage) => {
          const body: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => body.push(chunk));
          answer.on("end", () => {
            let bytes = Buffer.concat(body);
            const isTransaction = String(req.headers["x-amz-target"]).endsWith(".TransactWriteItems");
            if (isTransaction && ++transactions % CUT_EVERY === 0 && answer.statusCode === 200) {
              bytes = bytes.subarray(0, Math.floor(bytes.length / 2));
              cut++;
            }
            // The body's checksum no longer holds for a cut one: it goes, as a proxy that re-frames would drop it.
            const { "x-amz-crc32": _checksum, ...headers } = answer.headers as Record<string, unknown>;
            res.writeHead(answer.statusCode ?? 502, {
              ...headers,
              "content-length": String(bytes.length),
            } as never);
            res.end(bytes);
          });
        },
      );
      forward.on("error", () => res.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get cut() {
      return cut;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("concurrent creates", () => {
  let proxy: Awaited<ReturnType<typeof startCuttingProxy>>;
  let app: ReturnType<typeof createApp>;
  const logs: string[] = [];

  beforeAll(async () => {
    const config = await createTestConfig();
    proxy = await startCuttingProxy(config.endpoint as string);
    const store = createStore({
      ...config,
      serviceEndpoints: { ...config.serviceEndpoints, dynamodb: proxy.url },
    });
    const logger = createLogger({ level: "debug", sink: (line) => logs.push(line) });
    app = createApp({ store, logger, adminToken: TEST_ADMIN_TOKEN, allowPrivateUpstreams: true });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it(`${CREATES} creates, ${CONCURRENCY} at a time, some answers cut short: all 201, each server once`, async () => {
    const failures: unknown[] = [];
    let created = 0;
    let next = 0;
    const prefix = `burst-${Date.now().toString(36)}`;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CREATES) {
          const i = next++;
          const response = await app.request("/v1/servers", {
            method: "POST",
            headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
            body: JSON.stringify({ name: `${prefix}-${i}`, url: `http://127.0.0.1:9/mcp/${i}` }),
          });
          if (response.status === 201) created++;
          else failures.push({ status: response.status, body: await response.json() });
        }
      }),
    );

    expect(proxy.cut).toBeGreaterThanOrEqual(CREATES / CUT_EVERY - 1);
    expect(failures).toEqual([]);
    expect(created).toBe(CREATES);
    expect(logs.filter((line) => line.includes("SyntaxError"))).toEqual([]);
    const listed = await app.request("/v1/servers?limit=1000", {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    const names = ((await listed.json()) as { servers: Array<{ name: string }> }).servers
      .map((server) => server.name)
      .filter((name) => name.startsWith(prefix));
    expect(names).toHaveLength(CREATES);
    expect(new Set(names).size).toBe(CREATES);
  }, 180_000);
});
