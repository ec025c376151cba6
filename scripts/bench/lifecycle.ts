/**
 * Lifecycle figures on the dev stack (in-process API + worker poller against the emulator, upstream
 * in its own process): the median time from POST /v1/servers to `connected`, and how long one health
 * sweep of 200 registered servers takes when it re-lists every server's tools (a sweep past the
 * listing age: enqueue → every server re-probed; sweeps in between only check liveness).
 */
import { startStack, waitFor } from "../../tests/support/stack";
import { startEmulator } from "../lib/emulator";
import { percentile, startTsProcess } from "../lib/processes";

const CREATES = Number(process.env.BENCH_CREATES ?? 20);
const SWEEP_SERVERS = Number(process.env.BENCH_SWEEP_SERVERS ?? 200);

const emulator = await startEmulator((line) => console.error(line));
const upstream = await startTsProcess(
  "tests/fixtures/mcp-upstream-cli.ts",
  ["--name", "bench"],
  /^listening (\S+)$/,
);
const url = upstream.match[1]!;
const stack = await startStack();

try {
  const toConnected: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    const started = performance.now();
    const created = await stack.call("POST", "/v1/servers", { name: `create-${i}`, url });
    await waitFor(
      async () => (await stack.store.statuses.get(created.body.id))?.state,
      (state) => state === "connected",
      { intervalMs: 5, timeoutMs: 30_000 },
    );
    toConnected.push(performance.now() - started);
  }
  console.log(
    `lifecycle create→connected over ${CREATES} servers: median ${percentile(toConnected, 50).toFixed(1)} ms, p90 ${percentile(toConnected, 90).toFixed(1)} ms`,
  );

  const ids: string[] = [];
  for (let i = ids.length; i < SWEEP_SERVERS - CREATES; i++) {
    ids.push((await stack.call("POST", "/v1/servers", { name: `sweep-${i}`, url })).body.id);
  }
  await waitFor(
    async () =>
      [...(await stack.store.statuses.list()).values()].filter((s) => s.state === "connected").length,
    (connected) => connected >= SWEEP_SERVERS,
    { intervalMs: 200, timeoutMs: 120_000 },
  );
  const sweepStarted = new Date().toISOString();
  const started = performance.now();
  const probes = await stack.sweep({ maxListingAgeMs: 0 });
  const enqueuedMs = performance.now() - started;
  await waitFor(
    async () =>
      [...(await stack.store.statuses.list()).values()].filter(
        (s) => (s.lastConnectionAttemptAt ?? "") >= sweepStarted,
      ).length,
    (done) => done >= probes,
    { intervalMs: 100, timeoutMs: 300_000 },
  );
  const sweepMs = performance.now() - started;
  console.log(
    `lifecycle sweep of ${probes} servers: enqueued in ${enqueuedMs.toFixed(0)} ms, all re-probed in ${(sweepMs / 1000).toFixed(2)} s (${(sweepMs / probes).toFixed(1)} ms per server, ratio sweep/single-connect ${(sweepMs / percentile(toConnected, 50)).toFixed(1)}x)`,
  );
} finally {
  await stack.stop();
  await upstream.stop();
  await emulator.stop();
}
