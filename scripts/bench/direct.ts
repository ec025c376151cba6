/**
 * The upstream leg of a warm call, direct or through the SDK's client: two sessions from this process
 * to the same local 2025 upstream (the proxy bench's), one calling directly (`DirectCalls`), one with
 * the direct path taken away (the SDK's path alone), each making the same `echo` call in interleaved
 * rounds. Prints each path's p50/p99 and this process's CPU per call, and the direct path's share of
 * the SDK path's.
 *
 *   BENCH_ROUNDS  rounds (default 12, the first 2 warm-up), BENCH_CALLS calls per round and path (500)
 */
import { callTool, createGuardedFetch, openSession, type UpstreamSession } from "@mcpgw/upstream";
import { printTable, stopper } from "../lib/bench";
import { percentile, startTsProcess } from "../lib/processes";

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

  const paths: Array<[string, UpstreamSession]> = [
    ["SDK client", viaSdk],
    ["direct", direct],
  ];
  const latencies = new Map<string, number[]>(paths.map(([name]) => [name, []]));
  const cpuMs = new Map<string, number>(paths.map(([name]) => [name, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, session] of paths) {
      const times: number[] = [];
      const cpu = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) {
        const started = performance.now();
        await callTool(session, "echo", { text: "hi" }, { timeoutMs: 5_000 });
        times.push(performance.now() - started);
      }
      const used = process.cpuUsage(cpu);
      if (round < WARMUP_ROUNDS) continue;
      latencies.get(name)?.push(...times);
      cpuMs.set(name, (cpuMs.get(name) ?? 0) + (used.user + used.system) / 1000);
    }
  }

  const figures = paths.map(([name]) => {
    const samples = latencies.get(name) ?? [];
    return {
      name,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      cpu: (cpuMs.get(name) ?? 0) / samples.length,
    };
  });
  console.log(
    `direct: ${ROUNDS - WARMUP_ROUNDS} rounds × ${CALLS} warm calls per path (after ${WARMUP_ROUNDS} warm-up), interleaved; one upstream`,
  );
  printTable([
    ["path", "p50 ms", "p99 ms", "CPU ms/call (this process)"],
    ...figures.map((f) => [f.name, f.p50.toFixed(3), f.p99.toFixed(3), f.cpu.toFixed(3)]),
  ]);
  const [sdk, fast] = figures as [(typeof figures)[0], (typeof figures)[0]];
  console.log(
    `direct vs the SDK's path: p50 ${(fast.p50 - sdk.p50).toFixed(3)} ms (${(fast.p50 / sdk.p50).toFixed(2)}×), CPU per call ${(fast.cpu - sdk.cpu).toFixed(3)} ms (${(fast.cpu / sdk.cpu).toFixed(2)}×)`,
  );
} finally {
  await stopAll();
}
