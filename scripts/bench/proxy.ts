/**
 * Proxy overhead: the same warm `tools/call` against the same local upstream by several paths —
 * (a) directly with the SDK client, (b) through the gateway's POST /v1/tools/{name}/call and (c) with the
 * same SDK client through the gateway's `/mcp/{server}` — interleaved round by round in one run,
 * sequentially and at concurrency 16. The gateway paths run on two dev gateways side by side: one with
 * auditing and tracing on as deployed (default sampling; spans and metrics exported over OTLP/HTTP to a
 * sink in this process), and one with them off (`AUDIT_SINK=off`, `OTEL_SDK_DISABLED=true`), so the cost
 * of seeing everything is measured in the same run. Prints, per path, p50/p99, the added p50, the
 * concurrency-16 throughput and its ratio to direct, the CPU per call of the gateway process (the
 * upstream's and this client's for reference), the on/off ratios, then one `BENCH_PROXY {json}` line.
 *
 *   BENCH_ROUNDS  rounds (default 10); each path runs one batch per round and phase, in rotating order
 *   BENCH_CALLS   calls per batch (default 200)
 *   BENCH_WARMUP_S  seconds of untimed calls on every path first (default 20)
 *   BENCH_NODE_ARGS  node flags for the gateway processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
 *   BENCH_PATHS   the gateway paths to measure besides direct, comma-separated (default
 *                 `rest,mcp,rest_off,mcp_off`): one alone makes a profile of that path
 *   BENCH_OBSERVED_ENV  extra `NAME=value` settings (space-separated) for the observed gateway: turn
 *                 one part off to see what it costs (`AUDIT_SINK=off`), or everything for an A/A run
 *                 that shows the noise (`AUDIT_SINK=off OTEL_SDK_DISABLED=true`)
 *
 * The emulator runs on the same two cores and answers every request with `Connection: close` (each
 * audit write opens a new connection, which AWS's endpoints do not make a client do): its CPU is
 * printed beside the others, since the audit trail's writes are work it does for the observed gateway
 * and not for the dark one.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAwsClients, createStore, ensureResources, loadAwsConfig } from "@mcpgw/aws";
import { type AuditEvent, auditEventId } from "@mcpgw/core";
import { exportsTraces, sdkDisabled } from "@mcpgw/telemetry";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { measure, printTable, startDevGateway, stopper, until } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { cpuTimeMs, percentile, startTsProcess } from "../lib/processes";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const WARMUP_MS = 1000 * (Number(process.env.BENCH_WARMUP_S) >= 0 ? Number(process.env.BENCH_WARMUP_S) : 20);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 200);
const CONCURRENCY = 16;
const TOKEN = "bench-admin-token";
/** The issue's targets on loopback: what the gateway may add to a direct call. */
const TARGET = { addedP50Ms: 0.7, c16Ratio: 0.7 };
/** Issue 28: with auditing and tracing on, p50 and c16 throughput within 5 % of off. */
const OBSERVED_TARGET = 0.05;
/** Events written to calibrate {@link auditWriteCost}. */
const CALIBRATION_EVENTS = 3_000;

const ALL_PATHS = ["direct", "rest", "mcp", "rest_off", "mcp_off"] as const;
type PathName = (typeof ALL_PATHS)[number];
const chosen = (process.env.BENCH_PATHS ?? "rest,mcp,rest_off,mcp_off").split(",");
const PATHS = ALL_PATHS.filter((path) => path === "direct" || chosen.includes(path));
const LABELS: Record<PathName, string> = {
  direct: "direct",
  rest: "gateway REST",
  mcp: "gateway MCP",
  rest_off: "REST (obs. off)",
  mcp_off: "MCP (obs. off)",
};
/** Each observed path and the same path with auditing and tracing off. */
const PAIRS = [
  ["rest", "rest_off"],
  ["mcp", "mcp_off"],
] as const;
/** What BENCH_OBSERVED_ENV changes in the observed gateway's environment. */
const OBSERVED_ENV = Object.fromEntries(
  (process.env.BENCH_OBSERVED_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((setting) => {
      const at = setting.indexOf("=");
      if (at < 1) throw new Error(`BENCH_OBSERVED_ENV: "${setting}" is not NAME=value`);
      return [setting.slice(0, at), setting.slice(at + 1)];
    }),
);
/** The environment of the gateway that sees nothing. */
const DARK_ENV = { AUDIT_SINK: "off", OTEL_SDK_DISABLED: "true" };
const PHASES = ["seq", "c16"] as const;
type PhaseName = (typeof PHASES)[number];
const PROCESSES = ["gateway", "upstream", "client", "emulator"] as const;
type ProcessName = (typeof PROCESSES)[number];

/** What one path's batches of one phase added up to. */
interface Phase {
  latencies: number[];
  wallMs: number;
  cpuMs: Record<ProcessName, number>;
  /** Each round's batch: its p50 and its throughput (calls/s), for the paired on/off comparison. */
  rounds: Array<{ p50Ms: number; callsPerSec: number }>;
}

// Everything started is stopped in reverse order: on success, on a failure, and on SIGINT/SIGTERM.
const { stops, stopAll } = stopper();

try {
  const emulator = await startEmulator((line) => console.error(line));
  stops.push(() => emulator.stop());
  const upstream = await startTsProcess(
    "tests/fixtures/mcp-upstream-cli.ts",
    ["--name", "bench"],
    /^listening (\S+)$/,
  );
  stops.push(() => upstream.stop());
  const upstreamUrl = upstream.match[1]!;
  // Where the observed gateway exports its spans and metrics: a sink that reads and counts them.
  const otlp = { requests: 0, bytes: 0 };
  const sink = createServer((request, response) => {
    request.on("data", (chunk: Buffer) => {
      otlp.bytes += chunk.length;
    });
    request.on("end", () => {
      otlp.requests++;
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  stops.push(() => new Promise((resolve) => sink.close(resolve)));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

  const observed = await startDevGateway(emulator.endpoint, TOKEN, {
    OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
    ...OBSERVED_ENV,
  });
  stops.push(() => observed.stop());
  const dark = await startDevGateway(emulator.endpoint, TOKEN, DARK_ENV);
  stops.push(() => dark.stop());
  const args = { text: "hello" };
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

  /** Registers the upstream on a gateway, and its two ways in once it is connected. */
  async function gatewayPaths(gatewayUrl: string) {
    const created = (await (
      await fetch(`${gatewayUrl}/v1/servers`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "bench", url: upstreamUrl }),
      })
    ).json()) as { id?: string };
    if (!created.id) throw new Error(`could not register the upstream: ${JSON.stringify(created)}`);
    await until(async () => {
      const server = (await (await fetch(`${gatewayUrl}/v1/servers/${created.id}`, { headers })).json()) as {
        status: { state: string; error: string };
      };
      if (server.status.state === "failed") throw new Error(`upstream failed: ${server.status.error}`);
      return server.status.state === "connected";
    });
    const restCall = () =>
      fetch(`${gatewayUrl}/v1/tools/bench__echo/call`, {
        method: "POST",
        headers,
        body: JSON.stringify({ arguments: args }),
      });
    await until(async () => (await restCall()).ok);
    const viaMcp = new Client({ name: "bench", version: "1" });
    await viaMcp.connect(
      new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/bench`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    stops.push(() => viaMcp.close());
    return {
      rest: async () => {
        const response = await restCall();
        const body = await response.arrayBuffer();
        if (!response.ok) throw new Error(`REST call → ${response.status} ${Buffer.from(body).toString()}`);
      },
      mcp: sdkCall(viaMcp),
    };
  }

  // One plain SDK client per endpoint: it speaks to a stateless JSON endpoint and a session-ful one alike.
  const direct = new Client({ name: "bench", version: "1" });
  await direct.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
  stops.push(() => direct.close());
  const on = await gatewayPaths(observed.url);
  const off = await gatewayPaths(dark.url);
  const calls: Record<PathName, () => Promise<void>> = {
    direct: sdkCall(direct),
    rest: on.rest,
    mcp: on.mcp,
    rest_off: off.rest,
    mcp_off: off.mcp,
  };
  /** The gateway process each path goes through (direct: the observed one, for its background). */
  const gatewayPid: Record<PathName, number> = {
    direct: observed.child.pid!,
    rest: observed.child.pid!,
    mcp: observed.child.pid!,
    rest_off: dark.child.pid!,
    mcp_off: dark.child.pid!,
  };
  const upstreamPid = upstream.child.pid!;
  const gatewayUrl = observed.url;

  // Warm-up, as many calls on every path so that no gateway is warmer than the other: for WARMUP_MS
  // (a dev gateway's code reaches its steady speed only after some thousand calls: timed earlier, one
  // gateway's CPU per call read 50 % higher after 5 s of warm-up than after 20 s), and until the observed
  // gateway has exported once when it exports spans (it loads its span exporter then, a module
  // `npm run dev` compiles at that point and a deployed bundle does not).
  const exportsSpans =
    !sdkDisabled(OBSERVED_ENV) && exportsTraces({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, ...OBSERVED_ENV });
  const warming = Date.now();
  while (
    Date.now() - warming < WARMUP_MS ||
    (exportsSpans && otlp.requests === 0 && Date.now() - warming < WARMUP_MS + 20_000)
  )
    for (const path of PATHS) await measure(calls[path], 50, 1);
  if (exportsSpans && otlp.requests === 0)
    console.error("the observed gateway exported nothing: timing it cold");

  const phases = {} as Record<PathName, Record<PhaseName, Phase>>;
  for (const path of PATHS) {
    phases[path] = { seq: emptyPhase(), c16: emptyPhase() };
  }
  for (const phase of PHASES) {
    const concurrency = phase === "seq" ? 1 : CONCURRENCY;
    for (const path of PATHS) await measure(calls[path], 50, concurrency); // warm every path
    for (let round = 0; round < ROUNDS; round++) {
      for (const path of roundOrder(round)) {
        const into = phases[path][phase];
        const pids = { gateway: gatewayPid[path], upstream: upstreamPid, emulator: emulator.pid };
        const before = cpuNow(pids);
        const started = performance.now();
        const batch = await measure(calls[path], CALLS_PER_ROUND, concurrency);
        const batchMs = performance.now() - started;
        into.latencies.push(...batch);
        into.wallMs += batchMs;
        into.rounds.push({ p50Ms: percentile(batch, 50), callsPerSec: batch.length / (batchMs / 1000) });
        const after = cpuNow(pids);
        for (const name of PROCESSES) into.cpuMs[name] += after[name] - before[name];
      }
    }
  }
  // The floor any HTTP front adds: one loopback round trip to the gateway that does nothing. Measured
  // last: a gateway that served a burst of these first spent ~0.1 ms more CPU per call at c16 for the
  // rest of the run (an A/A run read it as a 10 % throughput gap between two identical gateways).
  // Both gateways serve as many, so that their processes' profiles (BENCH_NODE_ARGS) compare.
  const hopTo = (url: string) => async () => void (await (await fetch(`${url}/healthz`)).arrayBuffer());
  for (const url of [gatewayUrl, dark.url]) await measure(hopTo(url), 200, 1);
  const hopP50 = percentile(await measure(hopTo(gatewayUrl), 1000, 1), 50);
  await measure(hopTo(dark.url), 1000, 1);
  // The calibration only where the observed gateway writes its audit events to the emulator's table.
  const auditsToTable = (OBSERVED_ENV.AUDIT_SINK ?? "table") === "table";
  report(hopP50, phases, otlp, auditsToTable ? await auditWriteCost(emulator.pid) : undefined);
} finally {
  await stopAll();
}

function sdkCall(client: Client) {
  return async () => {
    const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result.content)}`);
  };
}

function emptyPhase(): Phase {
  return { latencies: [], wallMs: 0, cpuMs: { gateway: 0, upstream: 0, client: 0, emulator: 0 }, rounds: [] };
}

/** CPU ms used so far by the gateway, upstream and emulator processes (0: one not ours) and by this one. */
function cpuNow(pids: {
  gateway: number;
  upstream: number;
  emulator: number | undefined;
}): Record<ProcessName, number> {
  const own = process.cpuUsage();
  return {
    gateway: cpuTimeMs(pids.gateway),
    upstream: cpuTimeMs(pids.upstream),
    client: (own.user + own.system) / 1000,
    emulator: pids.emulator === undefined ? 0 : cpuTimeMs(pids.emulator),
  };
}

/**
 * What writing one audit event costs, measured against this run's emulator after the paths ran: the
 * emulator's CPU and the writer's (this process's, with the gateway's store and batches of 100), per
 * event. Undefined when the emulator is not this run's own (AWS_ENDPOINT_URL was set).
 */
async function auditWriteCost(
  emulatorPid: number | undefined,
): Promise<{ emulatorMs: number; writerMs: number } | undefined> {
  if (emulatorPid === undefined) return undefined;
  const config = { ...loadAwsConfig(), tableName: `bench-audit-${randomUUID().slice(0, 8)}` };
  await ensureResources(createAwsClients(config), config);
  const store = createStore(config);
  const now = Date.now();
  const event = (i: number): AuditEvent => ({
    id: auditEventId(now - 1_000 + (i % 1_000)),
    at: new Date(now).toISOString(),
    type: "call",
    principal: { kind: "admin" },
    plane: "rest",
    serverId: "00000000-0000-4000-8000-000000000000",
    serverName: "bench",
    tool: "echo",
    outcome: "ok",
    durationMs: 1.2,
    requestBytes: 16,
    responseBytes: 40,
    argumentKeys: ["text"],
    traceId: "0af7651916cd43dd8448eb211c80319c",
  });
  const write = async (from: number, to: number) => {
    for (let start = from; start < to; start += 100)
      await store.audit.append(
        Array.from({ length: Math.min(100, to - start) }, (_, i) => event(start + i)),
        { retentionDays: 1 },
      );
  };
  await write(0, CALIBRATION_EVENTS); // warm: connections, the table's first writes, the writer's code compiled
  const emulatorBefore = cpuTimeMs(emulatorPid);
  const ownBefore = process.cpuUsage();
  await write(CALIBRATION_EVENTS, 2 * CALIBRATION_EVENTS);
  const own = process.cpuUsage(ownBefore);
  return {
    emulatorMs: (cpuTimeMs(emulatorPid) - emulatorBefore) / CALIBRATION_EVENTS,
    writerMs: (own.user + own.system) / 1000 / CALIBRATION_EVENTS,
  };
}

/**
 * The paths of `round`, in order: direct first, then each observed path and its dark twin back to back,
 * the pairs rotating and which twin goes first alternating. No path runs twice in a row, and each twin
 * follows the same paths as often as the other: a path right after itself runs warmer (its process's
 * caches hot), which once read as a 10 % throughput gap between two identical gateways.
 */
function roundOrder(round: number): PathName[] {
  const pairs = PAIRS.map((pair) => pair.filter((path) => PATHS.includes(path)))
    .filter((pair) => pair.length > 0)
    .map((pair) => (round % 2 === 0 ? pair : [...pair].reverse()));
  const turn = Math.floor(round / 2) % Math.max(1, pairs.length);
  return ["direct", ...[...pairs.slice(turn), ...pairs.slice(0, turn)].flat()];
}

/** The table, the target lines and the machine-readable `BENCH_PROXY` line. */
function report(
  hopP50: number,
  phases: Record<PathName, Record<PhaseName, Phase>>,
  otlp: { requests: number; bytes: number },
  auditCost: { emulatorMs: number; writerMs: number } | undefined,
): void {
  const throughput = (path: PathName) => phases[path].c16.latencies.length / (phases[path].c16.wallMs / 1000);
  const directP50 = percentile(phases.direct.seq.latencies, 50);
  const figures = Object.fromEntries(
    PATHS.map((path) => {
      const { seq, c16 } = phases[path];
      const p50 = percentile(seq.latencies, 50);
      const perCall = (phase: Phase) =>
        Object.fromEntries(PROCESSES.map((name) => [name, phase.cpuMs[name] / phase.latencies.length]));
      return [
        path,
        {
          seq: { calls: seq.latencies.length, p50Ms: p50, p99Ms: percentile(seq.latencies, 99) },
          c16: {
            calls: c16.latencies.length,
            p50Ms: percentile(c16.latencies, 50),
            p99Ms: percentile(c16.latencies, 99),
            callsPerSec: throughput(path),
          },
          addedP50Ms: p50 - directP50,
          c16Ratio: throughput(path) / throughput("direct"),
          cpuMsPerCall: { seq: perCall(seq), c16: perCall(c16) },
        },
      ];
    }),
  ) as Record<
    PathName,
    {
      seq: { calls: number; p50Ms: number; p99Ms: number };
      c16: { calls: number; p50Ms: number; p99Ms: number; callsPerSec: number };
      addedP50Ms: number;
      c16Ratio: number;
      cpuMsPerCall: Record<PhaseName, Record<ProcessName, number>>;
    }
  >;

  const ms = (value: number) => value.toFixed(3);
  console.log(
    `proxy: ${ROUNDS} rounds × ${CALLS_PER_ROUND} calls per path, sequential and at concurrency ${CONCURRENCY}, one upstream, interleaved round by round`,
  );
  console.log(`bare HTTP hop to the gateway (GET /healthz) p50 ${ms(hopP50)} ms`);
  console.log("");
  printTable([
    ["latency (ms)", "seq p50", "seq p99", "added p50", "c16 p50", "c16 p99", "c16 calls/s", "c16 ratio"],
    ...PATHS.map((path) => {
      const f = figures[path];
      return [
        LABELS[path],
        ms(f.seq.p50Ms),
        ms(f.seq.p99Ms),
        path === "direct" ? "—" : `+${ms(f.addedP50Ms)}`,
        ms(f.c16.p50Ms),
        ms(f.c16.p99Ms),
        f.c16.callsPerSec.toFixed(0),
        f.c16Ratio.toFixed(2),
      ];
    }),
  ]);
  console.log("");
  printTable([
    ["CPU per call (ms)", ...PROCESSES.flatMap((name) => PHASES.map((phase) => `${name} ${phase}`))],
    ...PATHS.map((path) => [
      LABELS[path],
      ...PROCESSES.flatMap((name) => PHASES.map((phase) => ms(figures[path].cpuMsPerCall[phase][name]))),
    ]),
  ]);
  console.log(
    "  (gateway CPU during direct calls is its background: poller, sweeper; CPU is read from /proc, 10 ms ticks)",
  );
  console.log("");
  console.log(`targets: added p50 ≤ ${TARGET.addedP50Ms} ms, c16 throughput ≥ ${TARGET.c16Ratio} of direct`);
  const targets: Record<string, { addedP50: boolean; c16Ratio: boolean }> = {};
  for (const path of PATHS.filter((p) => p !== "direct" && !p.endsWith("_off"))) {
    const f = figures[path];
    targets[path] = {
      addedP50: f.addedP50Ms <= TARGET.addedP50Ms,
      c16Ratio: f.c16Ratio >= TARGET.c16Ratio,
    };
    const verdict = (met: boolean) => (met ? "met" : "MISSED");
    console.log(
      `  ${LABELS[path].padEnd(12)}  added p50 ${ms(f.addedP50Ms)} ms: ${verdict(targets[path].addedP50)}; c16 ratio ${f.c16Ratio.toFixed(2)}: ${verdict(targets[path].c16Ratio)}`,
    );
  }
  // The cost of seeing everything: each observed path against the same path with it off.
  // On these two cores the emulator is a process beside the others, and writing each call's audit event
  // costs it CPU that AWS's DynamoDB spends elsewhere. At concurrency 16 the cores are saturated, so the
  // throughput follows the CPU per call of all the processes: the ratio without the emulator's share is
  // at most the measured one scaled by (CPU per call on) / (CPU per call on − the emulator's per event)
  // (an upper bound: the writes land partly in other batches' time, and the cores may not be saturated).
  const c16CpuPerCall = (path: PathName) => {
    const { gateway, upstream, client } = figures[path].cpuMsPerCall.c16;
    return gateway + upstream + client;
  };
  // Judged on the median of the rounds' paired ratios (each round's on and off batches ran back to
  // back): a burst of the machine's noise moves one round, not the verdict. The pooled ratios beside it.
  const observability: Record<
    string,
    {
      p50Ratio: number;
      c16Ratio: number;
      c16RatioWithoutEmulatorAudit?: number;
      pooledP50Ratio: number;
      pooledC16Ratio: number;
      addedP50DeltaMs: number;
      met: boolean;
    }
  > = {};
  for (const [on, off] of PAIRS) {
    if (!PATHS.includes(on) || !PATHS.includes(off)) continue;
    const paired = (phase: PhaseName, figure: "p50Ms" | "callsPerSec") =>
      percentile(
        phases[on][phase].rounds.map((round, i) => round[figure] / phases[off][phase].rounds[i]![figure]),
        50,
      );
    const p50Ratio = paired("seq", "p50Ms");
    const c16Ratio = paired("c16", "callsPerSec");
    const onCpu = c16CpuPerCall(on) + (auditCost?.emulatorMs ?? 0);
    observability[on] = {
      p50Ratio,
      c16Ratio,
      ...(auditCost
        ? { c16RatioWithoutEmulatorAudit: (c16Ratio * onCpu) / (onCpu - auditCost.emulatorMs) }
        : {}),
      pooledP50Ratio: figures[on].seq.p50Ms / figures[off].seq.p50Ms,
      pooledC16Ratio: figures[on].c16.callsPerSec / figures[off].c16.callsPerSec,
      addedP50DeltaMs: figures[on].addedP50Ms - figures[off].addedP50Ms,
      met: p50Ratio <= 1 + OBSERVED_TARGET && c16Ratio >= 1 - OBSERVED_TARGET,
    };
  }
  if (Object.keys(observability).length > 0) {
    console.log("");
    console.log(
      `auditing and tracing on vs off, median of the rounds' paired ratios (target: within ${OBSERVED_TARGET * 100} %); OTLP sink got ${otlp.requests} exports, ${otlp.bytes} bytes${process.env.BENCH_OBSERVED_ENV ? `; the observed gateway with ${process.env.BENCH_OBSERVED_ENV}` : ""}`,
    );
    for (const [path, o] of Object.entries(observability)) {
      console.log(
        `  ${LABELS[path as PathName].padEnd(12)}  p50 on/off ${o.p50Ratio.toFixed(3)} (pooled ${o.pooledP50Ratio.toFixed(3)}, added p50 ${o.addedP50DeltaMs >= 0 ? "+" : ""}${ms(o.addedP50DeltaMs)} ms); c16 throughput on/off ${o.c16Ratio.toFixed(3)} (pooled ${o.pooledC16Ratio.toFixed(3)}${o.c16RatioWithoutEmulatorAudit === undefined ? "" : `; ${o.c16RatioWithoutEmulatorAudit.toFixed(3)} at most without the emulator's audit CPU`}): ${o.met ? "met" : "MISSED"}`,
      );
    }
    if (auditCost)
      console.log(
        `  one audit event's write (${CALIBRATION_EVENTS} written after the paths ran, batches of 100): the emulator ${ms(auditCost.emulatorMs)} ms CPU, its writer ${ms(auditCost.writerMs)} ms CPU (moto answers Connection: close, so every request of 25 opens a connection)`,
      );
  }
  const rounded = JSON.parse(JSON.stringify(figures), (_key, value) =>
    typeof value === "number" && !Number.isInteger(value) ? Number(value.toFixed(3)) : value,
  );
  console.log(
    `BENCH_PROXY ${JSON.stringify({
      rounds: ROUNDS,
      callsPerRound: CALLS_PER_ROUND,
      concurrency: CONCURRENCY,
      hopP50Ms: Number(hopP50.toFixed(3)),
      target: TARGET,
      ...rounded,
      met: targets,
      observability,
      otlp,
      ...(auditCost ? { auditWriteCpuMs: auditCost } : {}),
    })}`,
  );
}
