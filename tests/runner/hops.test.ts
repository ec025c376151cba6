/**
 * A stdio call through the runner pays one hop beyond the runner's own: a REST call to a stdio server
 * is one HTTP request from the gateway to the runner's face of it (then the child's stdio), with no
 * per-call initialize, discover or ping — the gateway's session with the face is warm. Counted by a
 * proxy between a gateway app and the runner that records each request's JSON-RPC method.
 */
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApp } from "@mcpgw/api";
import { createLogger } from "@mcpgw/core";
import { SessionPool } from "@mcpgw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../support/app";
import {
  createServer,
  type RunnerStack,
  reaches,
  startRunnerStack,
  TINY_STDIO,
  textOf,
  uniqueName,
} from "./helpers";

const CALLS = 50;

/** A proxy to `target` that records the JSON-RPC method of every request it passes on. */
async function countingProxy(target: string): Promise<{ url: string; methods: string[]; server: Server }> {
  const methods: string[] = [];
  const server = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let method = `${req.method} (no JSON-RPC body)`;
    try {
      method = String((JSON.parse(body.toString("utf8")) as { method?: unknown }).method);
    } catch {}
    methods.push(method);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => name !== "host" && name !== "content-length"),
    ) as Record<string, string>;
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method ?? "POST",
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, methods, server };
}

describe("runner: one hop per stdio call", () => {
  let stack: RunnerStack;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;
  const pool = new SessionPool();

  beforeAll(async () => {
    stack = await startRunnerStack();
    proxy = await countingProxy(stack.runner?.url ?? "");
  });
  afterAll(async () => {
    pool.close();
    await new Promise((resolve) => proxy?.server.close(resolve));
    await stack?.cleanup();
  });

  it(`${CALLS} warm REST calls to a stdio server are ${CALLS} requests to the runner, each a tools/call`, async () => {
    const name = uniqueName("hops");
    const id = await createServer(stack, { name, command: process.execPath, args: [TINY_STDIO] });
    await reaches(stack, id, "connected", 20_000);
    // A gateway app whose way to the runner goes through the counting proxy.
    const gateway = createApp({
      store: stack.store,
      logger: createLogger({ level: "error", sink: () => {} }),
      adminToken: TEST_ADMIN_TOKEN,
      allowPrivateUpstreams: true,
      runner: { url: proxy.url, token: stack.runner?.token ?? "" },
      gateway: { pool },
      serve: { gateway: true, admin: false },
    });
    const call = async () => {
      const response = await gateway.request(`/v1/tools/${name}__ping/call`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ arguments: {} }),
      });
      expect(response.status).toBe(200);
      expect(textOf((await response.json()) as Parameters<typeof textOf>[0])).toBe("pong");
    };
    await call(); // the cold call opens the gateway's session with the face
    const opening = proxy.methods.splice(0);

    for (let i = 0; i < CALLS; i++) await call();

    expect(opening).toContain("tools/call");
    expect(proxy.methods).toEqual(Array(CALLS).fill("tools/call"));
  });
});
