/**
 * The inbound leg of a warm `/mcp` call: a 2025 session's request served by its fast path
 * (`SessionTransport.serveRequest`) or by the SDK transport's own path, over HTTP through the gateway's
 * Node adapter, from the proxy bench's raw keep-alive client in this process, to the same SDK server
 * (an `echo` call answered at once) — interleaved rounds. Prints each path's p50/p99 and this process's
 * CPU per call (client and server both: the client's share is the same on each path), and the fast
 * path's share of the SDK path's.
 *
 *   BENCH_ROUNDS  rounds (default 12, the first 2 warm-up), BENCH_CALLS calls per round and path (1,000)
 */
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { startSessionPair } from "../../tests/support/session-pair";
import { compareTwoPaths, stopper } from "../lib/bench";
import { rawClient } from "../lib/raw-client";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const CALLS = Number(process.env.BENCH_CALLS ?? 1_000);
const WARMUP_ROUNDS = 2;

/** A server whose `echo` answers at once with the text it was given. */
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
  const raw = rawClient(1);
  stops.push(async () => raw.agent.destroy());
  await compareTwoPaths({
    title: "session: warm tools/call on 2025 sessions over one HTTP server, one keep-alive client",
    rounds: ROUNDS,
    calls: CALLS,
    warmupRounds: WARMUP_ROUNDS,
    cpuLabel: "client + server",
    paths: [
      ["the SDK transport", await raw.session(`${pair.origin}/sdk/mcp`)],
      ["the fast path", await raw.session(`${pair.origin}/fast/mcp`)],
    ],
  });
} finally {
  await stopAll();
}
