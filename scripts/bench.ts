/**
 * `npm run bench -- <name>`: benchmarks that print their figures as ratios measured in one run.
 *   lifecycle  median POST /v1/servers → connected; time to sweep 200 servers; edit→switch time of a URL
 *              edit under steady calls, and the calls served vs refused meanwhile
 *   proxy      what the gateway adds to a direct warm MCP call, by REST and by /mcp/{server}: p50/p99,
 *              added p50, concurrency-16 throughput ratio, CPU per call (last line: BENCH_PROXY {json})
 *   scale      1,000 servers on the dev stack: AWS calls per list, refresh and sweep (counted on the
 *              wire), sweep duration, admin list latency under a sweep, warm-call p99 vs 1 server
 *   isolation  spawn-to-ready of stdio children under their own uid vs a shared one (root only)
 *   bundles    per deployable bundle: bytes, gzip, the planes' modules it holds, cold-import time
 *   catalogue  search mode: upfront tokens of tools/list in full vs search mode at 50/500/5,000 tools,
 *              search_tools' top-5 hit rate over the 50 recorded tasks, the added p50 of call_tool
 *              and of a call through a tool set
 *   fleet      the runner fleet: a warm stdio call's added p50 through 3 runners vs one, table writes
 *              per minute per 100 instances at steady state, time to serve again 20/100/300 instances
 *              of a runner killed with SIGKILL
 *   lambda     the gateway's Lambda handler vs the app it wraps (app.fetch), warm and cold: its added
 *              p50/p99 per call by REST and by /mcp/{server}, import and first-invocation times, and what
 *              the added time is made of (last line: BENCH_LAMBDA {json})
 *   direct     the upstream leg of a warm call, direct (below the SDK's client) vs the SDK's path: p50/p99
 *              and CPU per call, interleaved, one run
 *   session    the inbound leg of a warm /mcp call on a 2025 session, its fast path vs the SDK transport's
 *              own path (over HTTP through the gateway's Node adapter): p50/p99 and CPU per call, one run
 *   cost       a cost model from measured counts: AWS requests, request units and CPU per operation on
 *              the dev stack, priced (scripts/bench/aws-prices.ts) per million warm calls, per month of
 *              1,000 / 10,000 servers swept, and as capacity at 1,000 calls/s (`--write-docs`: into
 *              docs/operations.md; last line: BENCH_COST {json})
 */
const benches: Record<string, () => Promise<unknown>> = {
  lifecycle: () => import("./bench/lifecycle"),
  proxy: () => import("./bench/proxy"),
  isolation: () => import("./bench/isolation"),
  scale: () => import("./bench/scale"),
  bundles: () => import("./bench/bundles"),
  catalogue: () => import("./bench/catalogue"),
  fleet: () => import("./bench/fleet"),
  cost: () => import("./bench/cost"),
  lambda: () => import("./bench/lambda"),
  direct: () => import("./bench/direct"),
  session: () => import("./bench/session"),
};

const name = process.argv[2];
const bench = name ? benches[name] : undefined;
if (!bench) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join("|")}>`);
  process.exit(2);
}
await bench();
process.exit(0);

export {};
