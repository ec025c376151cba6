/**
 * The inbound leg of a warm `/mcp` call: a 2025 session's request served by its fast path
 * (`SessionTransport.serveRequest`) or by the SDK transport's own path, over HTTP through the gateway's
 * Node adapter, from one keep-alive `node:http` client in this process, to the same SDK server (a
 * `tools/call` answered at once) — interleaved rounds. Prints each path's p50/p99 and this process's
 * CPU per call (client and server both: the client's share is the same on each path), and the fast
 * path's share of the SDK path's.
 *
 *   BENCH_ROUNDS  rounds (default 12, the first 2 warm-up), BENCH_CALLS calls per round and path (1,000)
 */
import { Agent, request } from "node:http";
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { startSessionPair } from "../../tests/support/session-pair";
import { compareTwoPaths, stopper } from "../lib/bench";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const CALLS = Number(process.env.BENCH_CALLS ?? 1_000);
const WARMUP_ROUNDS = 2;
const VERSION = "2025-11-25";

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One POST, its answer read whole. */
function post(url: string, headers: Record<string, string>, body: unknown) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>(
    (resolve, reject) => {
      const sent = request(url, { method: "POST", agent, headers }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
        );
      });
      sent.on("error", reject);
      sent.end(JSON.stringify(body));
    },
  );
}

/** A session opened on `url`: its call, a `tools/call` of `echo`. */
async function session(url: string): Promise<() => Promise<unknown>> {
  const base = { accept: "application/json, text/event-stream", "content-type": "application/json" };
  const opened = await post(url, base, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } },
  });
  const headers = {
    ...base,
    "mcp-session-id": String(opened.headers["mcp-session-id"]),
    "mcp-protocol-version": VERSION,
  };
  await post(url, headers, { jsonrpc: "2.0", method: "notifications/initialized" });
  let id = 1;
  return async () => {
    const answer = await post(url, headers, {
      jsonrpc: "2.0",
      id: id++,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    });
    if (answer.status !== 200 || !answer.text.includes('"text":"hi"'))
      throw new Error(`${url} → ${answer.status} ${answer.text.slice(0, 300)}`);
  };
}

function echoServer() {
  const server = new McpServer({ name: "bench", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.registerTool("echo", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  return server.server;
}

const { stops, stopAll } = stopper();
try {
  const pair = await startSessionPair(echoServer);
  stops.push(() => pair.close());
  stops.push(async () => agent.destroy());
  await compareTwoPaths({
    title: "session: warm tools/call on 2025 sessions over one HTTP server, one keep-alive client",
    rounds: ROUNDS,
    calls: CALLS,
    warmupRounds: WARMUP_ROUNDS,
    cpuLabel: "client + server",
    paths: [
      ["the SDK transport", await session(`${pair.origin}/sdk/mcp`)],
      ["the fast path", await session(`${pair.origin}/fast/mcp`)],
    ],
  });
} finally {
  await stopAll();
}
