/**
 * The upstream leg of a warm call, direct or through the SDK's client: two sessions from this process
 * to the same local 2025 upstream (the proxy bench's), one calling directly (`DirectCalls`), one with
 * the direct path taken away (the SDK's path alone), each making the same `echo` call in interleaved
 * rounds (their order alternating). Prints each path's p50/p99 and this process's CPU per call, and
 * the direct path's share of the SDK path's.
 *
 *   BENCH_ROUNDS  rounds (default 12, the first 2 warm-up), BENCH_CALLS calls per round and path (500)
 */
import { callTool, createGuardedFetch, openSession, type UpstreamSession } from "@mcpgw/upstream";
import { compareTwoPaths, stopper } from "../lib/bench";
import { startTsProcess } from "../lib/processes";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const WARMUP_ROUNDS = 2;

const { stops, stopAll } = stopper();
try {
  const upstream = await startTsProcess("tests/fixtures/mcp-upstream-cli.ts", [], /^listening (\S+)$/);
  stops.push(() => upstream.stop());
  const target = { url: upstream.match[1]!, headers: {} };
  const options = { fetch: createGuardedFetch({ allowPrivate: true }), timeoutMs: 5_000 };
  const direct = await openSession(target, options);
  stops.push(() => direct.close());
  const viaSdk = await openSession(target, options);
  stops.push(() => viaSdk.close());
  if (!direct.direct) throw new Error("the upstream's session does not call directly");
  viaSdk.direct = undefined;

  const call = (session: UpstreamSession) => () =>
    callTool(session, "echo", { text: "hi" }, { timeoutMs: 5_000 });
  await compareTwoPaths({
    title: "direct: warm calls to one upstream",
    rounds: ROUNDS,
    calls: CALLS,
    warmupRounds: WARMUP_ROUNDS,
    cpuLabel: "this process",
    paths: [
      ["the SDK client", call(viaSdk)],
      ["direct", call(direct)],
    ],
  });
} finally {
  await stopAll();
}
