/**
 * Lifecycle figures on the dev stack (in-process API + worker poller against the emulator, upstream
 * in its own process): the median time from POST /v1/servers to `connected`, and how long one health
 * sweep of 200 registered servers takes when it re-lists every server's tools (a sweep past the
 * listing age: enqueue → every server re-probed; sweeps in between only check liveness); and the
 * edit-to-switch time of a reconnecting edit under steady calls (PATCH url to a second upstream →
 * status `connected` by the new generation and calls reaching the new upstream), with the calls
 * served and refused meanwhile (median of BENCH_EDITS edits).
 */
import { startUpstream, type Upstream } from "../../tests/fixtures/mcp-upstream";
import { callOutcome, type Outcome, openLoadClient } from "../../tests/lifecycle/load-client";
import { type Stack, startStack, waitFor } from "../../tests/support/stack";
import { startEmulator } from "../lib/emulator";
import { percentile, startTsProcess } from "../lib/processes";

const CREATES = Number(process.env.BENCH_CREATES ?? 20);
const SWEEP_SERVERS = Number(process.env.BENCH_SWEEP_SERVERS ?? 200);
const EDITS = Number(process.env.BENCH_EDITS ?? 9);
/** Callers calling the edited server in a loop, alternately by REST and by `/mcp`. */
const CALLERS = 4;

const emulator = await startEmulator((line) => console.error(line));
const upstream = await startTsProcess(
  "tests/fixtures/mcp-upstream-cli.ts",
  ["--name", "bench"],
  /^listening (\S+)$/,
);
const url = upstream.match[1]!;
// No per-caller rate limits: the steady callers are one caller, and a 429 is not what this measures.
const stack = await startStack({ limits: false });

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

  await editToSwitch(stack);

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

/**
 * Moves one server's URL between two upstreams EDITS times under steady calls; for each edit, the
 * time until both the status shows a connection made since the PATCH and a call has reached the new
 * upstream, and the outcomes of the calls that ended in that window.
 */
async function editToSwitch(stack: Stack): Promise<void> {
  const targets: Upstream[] = [
    await startUpstream({ name: "first" }),
    await startUpstream({ name: "second" }),
  ];
  const clients = await Promise.all(Array.from({ length: CALLERS }, () => openLoadClient(stack.api.url)));
  const ended: Array<{ at: number; outcome: Outcome }> = [];
  let calling = true;
  try {
    const created = await stack.call("POST", "/v1/servers", { name: "switch", url: targets[0]!.url });
    await waitFor(
      async () => (await stack.call("GET", `/v1/servers/${created.body.id}`)).body.status.state,
      (state) => state === "connected",
      { timeoutMs: 30_000 },
    );
    await waitFor(
      () => callOutcome(clients[0]!, "rest", "switch__echo", { text: "warm" }),
      (outcome) => outcome.ok,
      { timeoutMs: 10_000 },
    );
    const loops = clients.map(async (client, i) => {
      for (let n = 0; calling; n++) {
        const outcome = await callOutcome(client, (i + n) % 2 ? "mcp" : "rest", "switch__echo", {
          text: "x",
        });
        ended.push({ at: performance.now(), outcome });
      }
    });

    const switchMs: number[] = [];
    const connectedMs: number[] = [];
    const during: Record<string, number> = {};
    for (let i = 1; i <= EDITS; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // steady calls before each edit
      const started = performance.now();
      const connected = await switchUrl(stack, created.body.id, targets[i % 2]!);
      const switched = performance.now();
      switchMs.push(switched - started);
      connectedMs.push(connected - started);
      for (const { at, outcome } of ended) {
        if (at < started || at > switched) continue;
        const key = outcome.ok ? "served" : `${outcome.status} ${outcome.code}`;
        during[key] = (during[key] ?? 0) + 1;
      }
    }
    calling = false;
    await Promise.all(loops);
    const { served = 0, ...refused } = during;
    const refusedCount = Object.values(refused).reduce((sum, n) => sum + n, 0);
    console.log(
      `lifecycle edit→switch (PATCH url to another upstream, ${CALLERS} steady callers) over ${EDITS} edits: median ${percentile(switchMs, 50).toFixed(0)} ms, p90 ${percentile(switchMs, 90).toFixed(0)} ms (status connected by the new generation: median ${percentile(connectedMs, 50).toFixed(0)} ms)`,
    );
    console.log(
      `lifecycle calls during the switches: ${served} served, ${refusedCount} refused (served ${((100 * served) / Math.max(1, served + refusedCount)).toFixed(1)} %)${refusedCount ? ` ${JSON.stringify(refused)}` : ""}`,
    );
  } finally {
    calling = false;
    // Gone before the sweep figures: its upstreams close with it.
    await stack.call("DELETE", "/v1/servers/switch");
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(targets.map((target) => target.close()));
  }
}

/**
 * PATCHes the server's URL to `target` and waits until the status shows a connection made since then
 * and a call has reached `target`; resolves to when the status showed it (performance.now()).
 */
async function switchUrl(stack: Stack, id: string, target: Upstream): Promise<number> {
  target.resetCounters();
  const since = new Date().toISOString();
  const patched = await stack.call("PATCH", `/v1/servers/${id}`, { url: target.url });
  if (patched.status !== 200) throw new Error(`PATCH → ${patched.status} ${JSON.stringify(patched.body)}`);
  let connectedAt: number | undefined;
  await waitFor(
    async () => {
      const { status } = (await stack.call("GET", `/v1/servers/${id}`)).body;
      if (
        connectedAt === undefined &&
        status.state === "connected" &&
        status.lastSuccessfulConnectionAt >= since
      )
        connectedAt = performance.now();
      return connectedAt !== undefined && target.toolCalls > 0;
    },
    Boolean,
    { intervalMs: 5, timeoutMs: 30_000 },
  );
  return connectedAt ?? performance.now();
}
