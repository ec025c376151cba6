/**
 * The control plane at scale, on the dev stack (`scripts/dev.ts` in its own process, the emulator
 * behind a counting proxy, one upstream process that every server points at):
 *
 *   1. warm-call p50/p99 through the gateway with 1 server registered;
 *   2. register the rest (default 1,000 in all) at concurrency 8: errors, time until all connected; the
 *      first warm call right after the last create (a server the directory knows: it must not wait on
 *      the refresh that reads them all) and the first call to the last one created (the directory
 *      does not know it yet: it may wait, up to its bound);
 *   3. AWS calls per operation, counted on the wire: an admin list of every server page by page,
 *      a data-plane refresh with nothing changed, a sweep of every (unchanged, connected) server —
 *      its catalogue, status and latency-history writes, and how long until its last job is done;
 *   4. `GET /v1/servers?limit=100` p50/p99 while a sweep runs; the emulator's and the stack's CPU;
 *   5. warm-call p50/p99 again with every server registered, sampled while a sweep and admin lists run,
 *      and its ratio to step 1;
 *   6. sweeps every 30 s for BENCH_CONVERGE_S (default 150 s): each run either runs or is skipped while
 *      the last one's jobs are still to come; the queue's backlog at each tick and once they stop — a
 *      sweep that converges leaves no backlog that grows from tick to tick.
 * Ends with one `BENCH_SCALE {json}` line.
 *
 *   BENCH_SERVERS  servers registered in all (default 1000)
 *   BENCH_CALLS    warm calls per measurement (default 2000, at concurrency 4)
 */
import { MISS_WAIT_MS } from "@mcpgw/api";
import { createStore, loadAwsConfig } from "@mcpgw/aws";
import { createLogger } from "@mcpgw/core";
import { runSweep, sweepSpreadSeconds } from "@mcpgw/worker";
import { type AwsCounts, meanLatencyMs, startAwsCounter, total } from "../lib/aws-counter";
import { queueDrained } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { cpuTimeMs, freePort, percentile, startTsProcess } from "../lib/processes";

const SERVERS = Number(process.env.BENCH_SERVERS ?? 1000);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CALL_CONCURRENCY = 4;
const CREATE_CONCURRENCY = 8;
const PAGE = 100;
const SWEEP_INTERVAL_S = 60;
/** The short interval that must converge, and how long it runs. */
const FAST_SWEEP_S = 30;
const CONVERGE_S = Number(process.env.BENCH_CONVERGE_S ?? 150);
const TOKEN = "bench-admin-token";
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

const emulator = await startEmulator((line) => console.error(line));
const counter = await startAwsCounter(emulator.endpoint);
// The bench's own store (the sweep it runs, its status reads) goes through the counter too.
process.env.AWS_ENDPOINT_URL = counter.url;
const store = createStore(loadAwsConfig());
const logger = createLogger({ level: "warn" });
const upstream = await startTsProcess(
  "tests/fixtures/mcp-upstream-cli.ts",
  ["--name", "scale"],
  /^listening (\S+)$/,
);
const upstreamUrl = upstream.match[1] as string;
const dev = await startTsProcess("scripts/dev.ts", [], /MCP Gateway ready at (\S+)/, {
  AWS_ENDPOINT_URL: counter.url,
  ADMIN_TOKEN: TOKEN,
  PORT: String(await freePort()),
  // The bench runs its sweeps itself, so each is counted alone.
  SWEEP_INTERVAL_SECONDS: "3600",
  LOG_LEVEL: "warn",
});
const gateway = dev.match[1] as string;

/** What the bench reads of an API answer: a created id, a page of servers and its cursor, a code. */
interface Answer {
  id?: string;
  code?: string;
  servers?: unknown[];
  nextCursor?: string | null;
  status?: { state?: string };
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Answer }> {
  const response = await fetch(`${gateway}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Answer) : {} };
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return performance.now() - started;
}

/** Runs `task` `count` times, `concurrency` at once; the latency of each, in ms. */
async function run(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const started = performance.now();
        await task(i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

/** A call to `tool`'s echo through the gateway's REST path: its status. */
async function call(tool = "one__echo"): Promise<number> {
  const response = await fetch(`${gateway}/v1/tools/${tool}/call`, {
    method: "POST",
    headers,
    body: JSON.stringify({ arguments: { text: "hi" } }),
  });
  await response.arrayBuffer();
  return response.status;
}

const warmCall = async () => {
  const status = await call();
  if (status !== 200) throw new Error(`warm call → ${status}`);
};

/** How long `task` takes, in ms, and what it returned. */
async function timed<T>(task: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await task();
  return { ms: performance.now() - started, value };
}

/** Warm calls' latency, and the AWS calls the stack made meanwhile (directory refreshes: ~1 per second). */
async function warmCalls(): Promise<{ p50: number; p99: number; awsPerCall: number }> {
  await run(200, CALL_CONCURRENCY, warmCall); // warm-up
  counter.reset();
  const latencies = await run(CALLS, CALL_CONCURRENCY, warmCall);
  const aws = total(counter.counts(), "DynamoDB", "KMS");
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), awsPerCall: aws / CALLS };
}

async function connectedCount(): Promise<number> {
  return [...(await store.statuses.list()).values()].filter((status) => status.state === "connected").length;
}

/** Waits until the last sweep run no longer holds (its jobs all due). */
async function waitUntilFree(): Promise<void> {
  await until(
    async () => ((await store.sweeps.last())?.holdsUntil ?? 0) <= Date.now(),
    600_000,
    "the last sweep's hold",
  );
}

/** A sweep run now, as the deployed schedule every `intervalS` runs it: it must not be skipped. */
async function sweepNow(intervalS: number) {
  await waitUntilFree();
  const result = await runSweep({ store, logger }, { spreadSeconds: sweepSpreadSeconds(intervalS) });
  if (result.skipped) throw new Error(`the sweep was skipped: ${result.skipped}`);
  return result;
}

const counted = (counts: AwsCounts) => ({
  dynamodb: total(counts, "DynamoDB"),
  kms: total(counts, "KMS"),
  operations: Object.fromEntries([...counts.operations].filter(([name]) => !name.startsWith("SQS."))),
});

const figures: Record<string, unknown> = { servers: SERVERS };
try {
  // 1. One server.
  const one = await api("POST", "/v1/servers", { name: "one", url: upstreamUrl });
  if (one.status !== 201) throw new Error(`could not register: ${JSON.stringify(one.body)}`);
  await until(async () => (await connectedCount()) === 1, 30_000, "the first server connected");
  const single = await warmCalls();
  console.log(
    `scale warm call, 1 server: p50 ${single.p50.toFixed(2)} ms, p99 ${single.p99.toFixed(2)} ms (${single.awsPerCall.toFixed(3)} AWS calls per call)`,
  );

  // 2. The rest.
  const createErrors: string[] = [];
  const createStarted = performance.now();
  const creates = await run(SERVERS - 1, CREATE_CONCURRENCY, async (i) => {
    const created = await api("POST", "/v1/servers", { name: `scale-${i}`, url: upstreamUrl });
    if (created.status !== 201) createErrors.push(`${created.status} ${created.body.code}`);
  });
  // The first calls after the bulk registration: to a server the directory knows (no wait on the
  // refresh that reads every new one), then to the last one created once it is connected (a name the
  // directory does not know: it waits, up to its bound).
  const firstKnown = await timed(() => call());
  const lastName = `scale-${SERVERS - 2}`;
  await until(
    async () => (await api("GET", `/v1/servers/${lastName}`)).body.status?.state === "connected",
    600_000,
    "the last server connected",
  );
  const firstNew = await timed(() => call(`${lastName}__echo`));
  figures.firstCalls = {
    knownMs: firstKnown.ms,
    knownStatus: firstKnown.value,
    newMs: firstNew.ms,
    newStatus: firstNew.value,
    boundMs: MISS_WAIT_MS,
  };
  console.log(
    `scale first calls after registering ${SERVERS - 1}: to a known server ${firstKnown.ms.toFixed(1)} ms (${firstKnown.value}); to the last one created, once connected, ${firstNew.ms.toFixed(1)} ms (${firstNew.value}) — the directory's bound for a name it does not know is ${MISS_WAIT_MS} ms`,
  );
  await until(async () => (await connectedCount()) >= SERVERS, 600_000, "all connected");
  const allConnectedS = (performance.now() - createStarted) / 1000;
  figures.create = { errors: createErrors.length, p50Ms: percentile(creates, 50), allConnectedS };
  console.log(
    `scale register ${SERVERS - 1} more at concurrency ${CREATE_CONCURRENCY}: ${createErrors.length} errors${createErrors.length ? ` (${createErrors.slice(0, 3).join(", ")})` : ""}, create p50 ${percentile(creates, 50).toFixed(1)} ms; all ${SERVERS} connected ${allConnectedS.toFixed(1)} s after the first create`,
  );
  await until(() => queueDrained(store), 120_000, "the queue drained after registering");

  // 3a. The admin list, page by page.
  counter.reset();
  let pages = 0;
  let listed = 0;
  let cursor: string | undefined;
  do {
    const page = await api(
      "GET",
      `/v1/servers?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    if (page.status !== 200) throw new Error(`list → ${page.status} ${JSON.stringify(page.body)}`);
    listed += page.body.servers?.length ?? 0;
    cursor = page.body.nextCursor ?? undefined;
    pages++;
  } while (cursor);
  const list = counted(counter.counts());
  const listBound = 1 + Math.ceil(SERVERS / PAGE);
  figures.list = { pages, listed, ...list, bound: listBound };
  console.log(
    `scale admin list of ${listed} servers in ${pages} pages of ${PAGE}: ${list.dynamodb} DynamoDB calls (bound ${listBound}), ${list.kms} KMS calls`,
  );

  // 3b. A data-plane refresh with nothing changed: a call starts it in the background once the
  // snapshot is 1 s old (the call does not wait for it); counted once it is done.
  await warmCall();
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  counter.reset();
  const refreshCall = await timed(warmCall);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const refresh = counted(counter.counts());
  figures.refresh = { ...refresh, callMs: refreshCall.ms };
  console.log(
    `scale data-plane refresh with nothing changed (started by a warm call after 2.5 s idle, which took ${refreshCall.ms.toFixed(1)} ms): ${refresh.dynamodb} DynamoDB calls, ${refresh.kms} KMS calls`,
  );

  // 3c. A sweep of every unchanged, connected server.
  counter.reset();
  const devCpu = cpuTimeMs(dev.child.pid as number);
  const motoCpu = emulator.pid ? cpuTimeMs(emulator.pid) : Number.NaN;
  const sweepStarted = performance.now();
  // Spread as the sweep timer spreads it: SQS delays each job by up to two thirds of the interval.
  const swept = await sweepNow(SWEEP_INTERVAL_S);
  const jobs = swept.probes + swept.checks;
  await until(() => queueDrained(store), 10 * SWEEP_INTERVAL_S * 1000, "the sweep's jobs done");
  const sweepCounts = counter.counts();
  const sweep = {
    probes: swept.probes,
    checks: swept.checks,
    finishedS: (performance.now() - sweepStarted) / 1000,
    catalogueWrites: sweepCounts.writtenBySortKey.get("CATALOG") ?? 0,
    statusWrites: sweepCounts.writtenBySortKey.get("STATUS") ?? 0,
    // Every check's point in its server's latency history (`LATENCY#<id>` / `probe`): one write each.
    historyWrites: sweepCounts.writtenBySortKey.get("probe") ?? 0,
    ...counted(sweepCounts),
    stackCpuS: (cpuTimeMs(dev.child.pid as number) - devCpu) / 1000,
    emulatorCpuS: (cpuTimeMs(emulator.pid ?? 0) - motoCpu) / 1000,
  };
  figures.sweep = sweep;
  console.log(
    `scale sweep of ${jobs} unchanged connected servers (${swept.checks} checks, ${swept.probes} full probes): done in ${sweep.finishedS.toFixed(1)} s (interval ${SWEEP_INTERVAL_S} s; ratio ${(sweep.finishedS / SWEEP_INTERVAL_S).toFixed(2)}); ${sweep.catalogueWrites} catalogue writes, ${sweep.statusWrites} status writes (${(sweep.statusWrites / Math.max(1, jobs)).toFixed(2)} per server), ${sweep.historyWrites} latency-history writes, ${sweep.dynamodb} DynamoDB calls (${(sweep.dynamodb / Math.max(1, jobs)).toFixed(2)} per server); CPU: stack ${sweep.stackCpuS.toFixed(1)} s, emulator ${sweep.emulatorCpuS.toFixed(1)} s`,
  );

  // 4. The admin list's latency, idle and while a sweep runs — and the emulator's meanwhile.
  counter.reset();
  const idle = await run(50, 1, async () => {
    if ((await api("GET", `/v1/servers?limit=${PAGE}`)).status !== 200) throw new Error("list failed");
  });
  const idleQueryMs = meanLatencyMs(counter.counts(), "DynamoDB.Query");
  counter.reset();
  const motoBefore = emulator.pid ? cpuTimeMs(emulator.pid) : Number.NaN;
  const sweepBegan = performance.now();
  const during = sweepNow(SWEEP_INTERVAL_S).then(() =>
    until(() => queueDrained(store), 600_000, "the second sweep"),
  );
  let sweeping = true;
  void during.finally(() => {
    sweeping = false;
  });
  const listLatencies: number[] = [];
  while (sweeping || listLatencies.length < 20) {
    const started = performance.now();
    const page = await api("GET", `/v1/servers?limit=${PAGE}`);
    if (page.status !== 200) throw new Error(`list → ${page.status}`);
    listLatencies.push(performance.now() - started);
  }
  await during;
  const busy = (cpuTimeMs(emulator.pid ?? 0) - motoBefore) / (performance.now() - sweepBegan);
  const queryMs = meanLatencyMs(counter.counts(), "DynamoDB.Query");
  figures.listIdle = { p50: percentile(idle, 50), p99: percentile(idle, 99), emulatorQueryMs: idleQueryMs };
  figures.listUnderSweep = {
    samples: listLatencies.length,
    p50: percentile(listLatencies, 50),
    p99: percentile(listLatencies, 99),
    emulatorQueryMs: queryMs,
    emulatorBusy: busy,
  };
  console.log(
    `scale GET /v1/servers?limit=${PAGE}: idle p50 ${percentile(idle, 50).toFixed(1)} ms, p99 ${percentile(idle, 99).toFixed(1)} ms, of which the emulator's one query ${idleQueryMs.toFixed(1)} ms on average; while a sweep runs p50 ${percentile(listLatencies, 50).toFixed(1)} ms, p99 ${percentile(listLatencies, 99).toFixed(1)} ms over ${listLatencies.length} requests (target p50 ≤ 50 ms) — meanwhile the emulator answered a DynamoDB query in ${queryMs.toFixed(1)} ms on average and was busy ${(busy * 100).toFixed(0)} % of one core`,
  );

  // 5. Warm calls with every server registered, sampled while a sweep and admin lists run.
  let busy5 = true;
  const sweep5 = sweepNow(SWEEP_INTERVAL_S);
  const lists5 = (async () => {
    while (busy5) await api("GET", `/v1/servers?limit=${PAGE}`);
  })();
  const many = await warmCalls();
  busy5 = false;
  await Promise.all([sweep5, lists5]);
  await until(() => queueDrained(store), 600_000, "the third sweep");
  figures.warm = { single, many, p99Ratio: many.p99 / single.p99 };
  console.log(
    `scale warm call, ${SERVERS} servers, while a sweep and admin lists run: p50 ${many.p50.toFixed(2)} ms, p99 ${many.p99.toFixed(2)} ms (${many.awsPerCall.toFixed(3)} AWS calls per call, the sweep's and lists' included); p99 ratio to 1 server ${(many.p99 / single.p99).toFixed(2)} (target ≤ 2)`,
  );

  // 6. Sweeps every 30 s: each runs or is skipped while the last one's jobs are still to come.
  const ticks: Array<{ atS: number; ran: boolean; skipped?: string; jobs: number; backlog: number }> = [];
  const convergeBegan = performance.now();
  await waitUntilFree();
  while (performance.now() - convergeBegan < CONVERGE_S * 1000) {
    const tickAt = performance.now();
    const result = await runSweep({ store, logger }, { spreadSeconds: sweepSpreadSeconds(FAST_SWEEP_S) });
    ticks.push({
      atS: (tickAt - convergeBegan) / 1000,
      ran: result.skipped === undefined,
      ...(result.skipped ? { skipped: result.skipped } : {}),
      jobs: result.probes + result.checks,
      backlog: await store.jobs.depth(),
    });
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, FAST_SWEEP_S * 1000 - (performance.now() - tickAt))),
    );
  }
  const drainedS = (await until(() => queueDrained(store), 600_000, "the 30 s sweeps' jobs done")) / 1000;
  const backlogs = ticks.map((tick) => tick.backlog);
  figures.converge = { intervalS: FAST_SWEEP_S, ticks, drainedAfterS: drainedS };
  console.log(
    `scale sweeps every ${FAST_SWEEP_S} s for ${CONVERGE_S} s: ${ticks.filter((tick) => tick.ran).length} of ${ticks.length} ran (${
      ticks
        .filter((tick) => !tick.ran)
        .map((tick) => tick.skipped)
        .join(", ") || "none skipped"
    }); queue backlog at each tick ${backlogs.join(" → ")}; empty ${drainedS.toFixed(1)} s after the last tick`,
  );
  console.log(`BENCH_SCALE ${JSON.stringify(figures)}`);
} finally {
  await dev.stop();
  await upstream.stop();
  await counter.stop();
  await emulator.stop();
}
