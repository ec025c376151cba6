/**
 * Proxy overhead: the same warm `tools/call` against the same local upstream by several paths, each
 * timed against a direct call made with the same client, all interleaved round by round in one run,
 * sequentially and at concurrency 16.
 *
 * - One raw keep-alive HTTP client (one `node:http` Agent for every raw path) posting JSON-RPC: straight
 *   to the upstream (`direct`); through a bare Node `http` keep-alive proxy in a child process that pipes
 *   each request to the upstream and its answer back (`bare`: the floor any proxy hop adds, measured
 *   in the same rounds); through the gateway's `POST /v1/tools/{name}/call` (`rest`, body
 *   `{arguments}`) and its `/mcp/{server}` (`mcp`, a 2025 session opened by one initialize, then only
 *   tools/call posts are timed) — each with the admin token and with an API key scoped to the server
 *   (`rest_key`, `mcp_key`).
 * - The SDK client: straight to the upstream (`sdk_direct`) and through `/mcp/{server}` (`sdk_mcp`,
 *   `sdk_mcp_key`).
 *
 * The gateway paths run on a dev gateway with auditing and tracing on as deployed (default sampling;
 * spans and metrics exported over OTLP/HTTP to a sink in this process), and each has a twin `…_off` on
 * a second dev gateway with both off (`AUDIT_SINK=off`, `OTEL_SDK_DISABLED=true`), run back to back
 * with it, so the cost of seeing everything is measured in the same run.
 *
 * Prints, per path, p50/p99, the added p50/p99 over its own client's direct call, the concurrency-16
 * throughput and its ratio to that direct call, the CPU per call of the process it goes through (the
 * upstream's and this client's for reference); then the bare hop and the goal — each gateway path's
 * added p50 at most {@link TARGET}.addedP50VsBare × the bare hop's, its c16 throughput at least
 * {@link TARGET}.c16Ratio × direct — the on/off ratios, and one `BENCH_PROXY {json}` line.
 *
 *   BENCH_ROUNDS  rounds (default 10); each path runs one batch per round and phase, in rotating order
 *   BENCH_CALLS   calls per sequential batch (default 400)
 *   BENCH_C16_CALLS  calls per concurrent batch (default 5 × BENCH_CALLS: about a second of calls)
 *   BENCH_WARMUP_S  seconds of untimed calls on every path first (default 20)
 *   BENCH_NODE_ARGS  node flags for the gateway processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
 *   BENCH_PATHS   the gateway paths to measure, comma-separated (default all: `rest,rest_key,mcp,mcp_key,
 *                 sdk_mcp,sdk_mcp_key` and each one's `…_off` twin); `direct` and `bare` always run,
 *                 `sdk_direct` with any `sdk_` path. One alone makes a profile of that path
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
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { auditEntry, createAwsClients, createStore, ensureResources, loadAwsConfig } from "@mcpgw/aws";
import { type AuditEvent, auditEventId } from "@mcpgw/core";
import { exportsTraces, sdkDisabled } from "@mcpgw/telemetry";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectSdkClient, measure, printTable, startDevGateway, stopper, until } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { cpuTimeMs, percentile, startTsProcess } from "../lib/processes";
import { ECHO_ARGUMENTS, rawClient } from "../lib/raw-client";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const WARMUP_MS = 1000 * (Number(process.env.BENCH_WARMUP_S) >= 0 ? Number(process.env.BENCH_WARMUP_S) : 20);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 400);
/**
 * Calls per concurrent batch: about a second of them, so each batch spans the observed gateway's
 * periodic work (its audit writer flushes once a second) as the whole run does, and an on/off pair does
 * not differ by whether a flush fell into a fifth of a second.
 */
const C16_CALLS_PER_ROUND = Number(process.env.BENCH_C16_CALLS ?? 5 * CALLS_PER_ROUND);
const CONCURRENCY = 16;
const TOKEN = "bench-admin-token";
/**
 * Issue 30's goal, measured in the same run: what the gateway adds to a direct call's p50 at most twice
 * what a bare Node proxy hop adds, and its concurrency-16 throughput at least 0.85 of direct (each
 * against a direct call made with the same client).
 */
const TARGET = { addedP50VsBare: 2, c16Ratio: 0.85 };
/** Issue 28: with auditing and tracing on, p50 and c16 throughput within 5 % of off. */
const OBSERVED_TARGET = 0.05;
/** Events written to calibrate {@link auditWriteCost}. */
const CALIBRATION_EVENTS = 3_000;
/** The flag that makes this module the bare proxy's process instead of the bench. */
const BARE_PROXY_FLAG = "--bare-proxy";

/** Who calls: the raw keep-alive HTTP client or the SDK client. */
type ClientKind = "raw" | "sdk";
/** A path: its client, where it goes (the upstream, the bare proxy, the gateway's REST or /mcp), how. */
interface PathSpec {
  client: ClientKind;
  via: "direct" | "bare" | "rest" | "mcp";
  /** On the gateway with auditing and tracing off. */
  dark?: boolean;
  /** With the API key instead of the admin token. */
  key?: boolean;
}
const PATH_NAMES = [
  "direct",
  "bare",
  "rest",
  "rest_key",
  "mcp",
  "mcp_key",
  "sdk_direct",
  "sdk_mcp",
  "sdk_mcp_key",
  "rest_off",
  "rest_key_off",
  "mcp_off",
  "mcp_key_off",
  "sdk_mcp_off",
  "sdk_mcp_key_off",
] as const;
type PathName = (typeof PATH_NAMES)[number];
const SPECS: Record<PathName, PathSpec> = {
  direct: { client: "raw", via: "direct" },
  bare: { client: "raw", via: "bare" },
  rest: { client: "raw", via: "rest" },
  rest_key: { client: "raw", via: "rest", key: true },
  mcp: { client: "raw", via: "mcp" },
  mcp_key: { client: "raw", via: "mcp", key: true },
  sdk_direct: { client: "sdk", via: "direct" },
  sdk_mcp: { client: "sdk", via: "mcp" },
  sdk_mcp_key: { client: "sdk", via: "mcp", key: true },
  rest_off: { client: "raw", via: "rest", dark: true },
  rest_key_off: { client: "raw", via: "rest", key: true, dark: true },
  mcp_off: { client: "raw", via: "mcp", dark: true },
  mcp_key_off: { client: "raw", via: "mcp", key: true, dark: true },
  sdk_mcp_off: { client: "sdk", via: "mcp", dark: true },
  sdk_mcp_key_off: { client: "sdk", via: "mcp", key: true, dark: true },
};
const isGatewayPath = (path: PathName) => SPECS[path].via === "rest" || SPECS[path].via === "mcp";
const chosen = (process.env.BENCH_PATHS ?? PATH_NAMES.filter(isGatewayPath).join(",")).split(",");
for (const name of chosen)
  if (!PATH_NAMES.includes(name as PathName))
    throw new Error(`BENCH_PATHS: unknown path "${name}" (one of ${PATH_NAMES.filter(isGatewayPath)})`);
const PATHS = PATH_NAMES.filter((path) =>
  path === "sdk_direct"
    ? chosen.some((name) => name.startsWith("sdk_"))
    : !isGatewayPath(path) || chosen.includes(path),
);
/** Each path's baseline: the direct call of its own client. */
const directOf = (path: PathName): PathName => (SPECS[path].client === "raw" ? "direct" : "sdk_direct");
/** The paths judged against the goal: the gateway's, as deployed (auditing and tracing on). */
const GOAL_PATHS = PATHS.filter((path) => isGatewayPath(path) && !SPECS[path].dark);
function label(path: PathName): string {
  const { via, dark, key } = SPECS[path];
  if (via === "direct") return "direct";
  if (via === "bare") return "bare Node proxy";
  return `${via === "rest" ? "REST" : "/mcp/{server}"} ${key ? "API key" : "admin"}${dark ? ", obs. off" : ""}`;
}
const describe = (path: PathName) => `${SPECS[path].client.padEnd(3)}  ${label(path)}`;
/**
 * Each observed path and its twin on the dark gateway, both run: every gateway path has one, so that
 * both gateways serve as many paths in the same pattern (a gateway idle for more of each round read
 * up to 35 % more CPU per call in an A/A run).
 */
const PAIRS = GOAL_PATHS.flatMap((path) => {
  const twin = `${path}_off` as PathName;
  return PATHS.includes(twin) ? [[path, twin] as const] : [];
});
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
/** `hop`: the process the path goes through (a gateway, the bare proxy; direct: the observed gateway, idle). */
const PROCESSES = ["hop", "upstream", "client", "emulator"] as const;
type ProcessName = (typeof PROCESSES)[number];

/** What one path's batches of one phase added up to. */
interface Phase {
  latencies: number[];
  wallMs: number;
  cpuMs: Record<ProcessName, number>;
  /** Each round's batch: its p50 and its throughput (calls/s), for the paired on/off comparison. */
  rounds: Array<{ p50Ms: number; callsPerSec: number }>;
}

if (process.argv[2] === BARE_PROXY_FLAG) await serveBareProxy(process.argv[3]!);
else await bench();

async function bench(): Promise<void> {
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
    // The floor: a bare Node proxy in a process of its own, as the gateway is.
    const bare = await startTsProcess(
      "scripts/bench/proxy.ts",
      [BARE_PROXY_FLAG, upstreamUrl],
      /^listening (\S+)$/,
    );
    stops.push(() => bare.stop());
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
    const dark = PATHS.some((path) => SPECS[path].dark)
      ? await startDevGateway(emulator.endpoint, TOKEN, DARK_ENV)
      : undefined;
    if (dark) stops.push(() => dark.stop());
    const raw = rawClient(CONCURRENCY);
    stops.push(async () => raw.agent.destroy());
    await register(observed.url, upstreamUrl);
    if (dark) await register(dark.url, upstreamUrl);
    const keyOn = async (off: boolean) =>
      PATHS.some((path) => SPECS[path].key && Boolean(SPECS[path].dark) === off)
        ? createKey(off ? dark!.url : observed.url)
        : "";
    const apiKeys = { observed: await keyOn(false), dark: await keyOn(true) };

    /** One SDK client on `url` (its own session), and its call. */
    const sdkSession = async (url: string, token?: string) =>
      sdkCall(await connectSdkClient(url, token, stops));
    /** A path's call, its session (if it has one) opened. */
    const connect = (path: PathName): Promise<() => Promise<void>> => {
      const { client, via, dark: off, key } = SPECS[path];
      const token = key ? apiKeys[off ? "dark" : "observed"] : TOKEN;
      const gatewayUrl = off ? dark!.url : observed.url;
      if (via === "direct") return client === "raw" ? raw.session(upstreamUrl) : sdkSession(upstreamUrl);
      if (via === "bare") return raw.session(bare.match[1]!);
      if (via === "rest") return Promise.resolve(raw.rest(`${gatewayUrl}/v1/tools/bench__echo/call`, token));
      return client === "raw"
        ? raw.session(`${gatewayUrl}/mcp/bench`, token)
        : sdkSession(`${gatewayUrl}/mcp/bench`, token);
    };
    const calls = {} as Record<PathName, () => Promise<void>>;
    // A gateway's first calls may come before its directory has the new server (or its key index the key).
    for (const path of PATHS)
      calls[path] = await retried(async () => {
        const call = await connect(path);
        await call();
        return call;
      });
    /** The process each path goes through (direct: the observed gateway, for its background). */
    const hopPid = (path: PathName): number => {
      const { via, dark: off } = SPECS[path];
      if (via === "bare") return bare.child.pid!;
      return off ? dark!.child.pid! : observed.child.pid!;
    };
    const upstreamPid = upstream.child.pid!;

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
          // Untimed first, so that only steady calls are timed: a path idle through the other paths'
          // batches finds its keep-alive connections closed (Node servers close them after 5 s idle),
          // this client's and the hop's to the upstream alike.
          await measure(calls[path], 2 * concurrency, concurrency);
          const pids = { hop: hopPid(path), upstream: upstreamPid, emulator: emulator.pid };
          const before = cpuNow(pids);
          const started = performance.now();
          const batch = await measure(
            calls[path],
            phase === "seq" ? CALLS_PER_ROUND : C16_CALLS_PER_ROUND,
            concurrency,
          );
          const batchMs = performance.now() - started;
          into.latencies.push(...batch);
          into.wallMs += batchMs;
          into.rounds.push({ p50Ms: percentile(batch, 50), callsPerSec: batch.length / (batchMs / 1000) });
          const after = cpuNow(pids);
          for (const name of PROCESSES) into.cpuMs[name] += after[name] - before[name];
        }
      }
    }
    // The calibration only where the observed gateway writes its audit events to the emulator's table.
    const auditsToTable = (OBSERVED_ENV.AUDIT_SINK ?? "table") === "table";
    report(phases, otlp, auditsToTable ? await auditWriteCost(emulator.pid) : undefined);
  } finally {
    await stopAll();
  }
}

/** `attempt`'s value once it stops throwing, within {@link until}'s bound (else its last error). */
async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  let outcome = { error: new Error("not attempted") } as { value: T } | { error: unknown };
  await until(async () => {
    try {
      outcome = { value: await attempt() };
      return true;
    } catch (error) {
      outcome = { error };
      return false;
    }
  }).catch(() => undefined);
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

/** Registers the bench upstream on the gateway at `gatewayUrl` and waits until it is connected. */
async function register(gatewayUrl: string, upstreamUrl: string): Promise<void> {
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
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
}

/** An API key scoped to the bench server, its limits far above what the bench calls. */
async function createKey(gatewayUrl: string): Promise<string> {
  const response = await fetch(`${gatewayUrl}/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({
      name: "bench",
      servers: ["bench"],
      rateLimit: { perMinute: 1_000_000, burst: 100_000, concurrent: 10_000 },
    }),
  });
  const created = (await response.json()) as { key?: string };
  if (!created.key) throw new Error(`could not create an API key: ${JSON.stringify(created)}`);
  return created.key;
}

/**
 * The bare proxy's process: a minimal Node `http` server that forwards every request to `target`'s
 * origin over keep-alive connections and pipes the answer back (hop-by-hop headers dropped both ways).
 * Prints `listening <url>`: its own origin with `target`'s path.
 */
async function serveBareProxy(target: string): Promise<void> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const hopByHop = new Set(["connection", "keep-alive", "transfer-encoding"]);
  const endToEnd = (headers: IncomingHttpHeaders) =>
    Object.fromEntries(Object.entries(headers).filter(([name]) => !hopByHop.has(name)));
  const server = createServer((request, response) => {
    const forwarded = httpRequest(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...endToEnd(request.headers), host: upstream.host },
        agent,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening http://127.0.0.1:${port}${upstream.pathname}\n`);
}

function sdkCall(client: Client) {
  return async () => {
    const result = await client.callTool({ name: "echo", arguments: ECHO_ARGUMENTS });
    if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result.content)}`);
  };
}

function emptyPhase(): Phase {
  return { latencies: [], wallMs: 0, cpuMs: { hop: 0, upstream: 0, client: 0, emulator: 0 }, rounds: [] };
}

/** CPU ms used so far by the hop, upstream and emulator processes (0: one not ours) and by this one. */
function cpuNow(pids: {
  hop: number;
  upstream: number;
  emulator: number | undefined;
}): Record<ProcessName, number> {
  const own = process.cpuUsage();
  return {
    hop: cpuTimeMs(pids.hop),
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
        Array.from({ length: Math.min(100, to - start) }, (_, i) => auditEntry(event(start + i))),
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
 * The paths of `round`, in order: every path once, each observed path and its dark twin back to back
 * (which twin goes first alternating), the whole order rotating by one each round. No path runs twice
 * in a row, and each twin follows the same paths as often as the other: a path right after itself
 * runs warmer (its process's caches hot), which once read as a 10 % throughput gap between two
 * identical gateways.
 */
function roundOrder(round: number): PathName[] {
  const groups: PathName[][] = [];
  for (const path of PATHS) {
    const pair = PAIRS.find((twins): boolean => twins.includes(path));
    const twins = pair?.filter((twin) => PATHS.includes(twin)) ?? [path];
    if (twins[0] !== path) continue; // the second twin goes with the first
    groups.push(round % 2 === 0 ? twins : [...twins].reverse());
  }
  const turn = round % groups.length;
  return [...groups.slice(turn), ...groups.slice(0, turn)].flat();
}

/** What the report tells of one path. */
interface Figures {
  client: ClientKind;
  seq: { calls: number; p50Ms: number; p99Ms: number };
  c16: { calls: number; p50Ms: number; p99Ms: number; callsPerSec: number };
  /** Over the direct call of the same client. */
  addedP50Ms: number;
  addedP99Ms: number;
  c16Ratio: number;
  /** The added p50 over the bare hop's (gateway paths). */
  addedP50VsBare?: number;
  cpuMsPerCall: Record<PhaseName, Record<ProcessName, number>>;
}

/** The table, the target lines and the machine-readable `BENCH_PROXY` line. */
function report(
  phases: Record<PathName, Record<PhaseName, Phase>>,
  otlp: { requests: number; bytes: number },
  auditCost: { emulatorMs: number; writerMs: number } | undefined,
): void {
  const throughput = (path: PathName) => phases[path].c16.latencies.length / (phases[path].c16.wallMs / 1000);
  const seqPercentile = (path: PathName, p: number) => percentile(phases[path].seq.latencies, p);
  const bareAddedP50 = seqPercentile("bare", 50) - seqPercentile("direct", 50);
  const figures = {} as Record<PathName, Figures>;
  for (const path of PATHS) {
    const { seq, c16 } = phases[path];
    const direct = directOf(path);
    const perCall = (phase: Phase) =>
      Object.fromEntries(
        PROCESSES.map((name) => [name, phase.cpuMs[name] / phase.latencies.length]),
      ) as Record<ProcessName, number>;
    const addedP50Ms = seqPercentile(path, 50) - seqPercentile(direct, 50);
    figures[path] = {
      client: SPECS[path].client,
      seq: { calls: seq.latencies.length, p50Ms: seqPercentile(path, 50), p99Ms: seqPercentile(path, 99) },
      c16: {
        calls: c16.latencies.length,
        p50Ms: percentile(c16.latencies, 50),
        p99Ms: percentile(c16.latencies, 99),
        callsPerSec: throughput(path),
      },
      addedP50Ms,
      addedP99Ms: seqPercentile(path, 99) - seqPercentile(direct, 99),
      c16Ratio: throughput(path) / throughput(direct),
      ...(isGatewayPath(path) ? { addedP50VsBare: addedP50Ms / bareAddedP50 } : {}),
      cpuMsPerCall: { seq: perCall(seq), c16: perCall(c16) },
    };
  }

  const ms = (value: number) => value.toFixed(3);
  const signed = (value: number) => `${value >= 0 ? "+" : ""}${ms(value)}`;
  const added = (path: PathName, value: number) => (SPECS[path].via === "direct" ? "—" : signed(value));
  console.log(
    `proxy: ${ROUNDS} rounds × ${CALLS_PER_ROUND} calls per path sequential and ${C16_CALLS_PER_ROUND} at concurrency ${CONCURRENCY}, one upstream, interleaved round by round; added = over the direct call of the same client (raw: one keep-alive node:http client posting JSON-RPC or the REST body; sdk: the MCP SDK client)`,
  );
  console.log("");
  printTable([
    [
      "client  path",
      "p50",
      "p99",
      "added p50",
      "added p99",
      "c16 p50",
      "c16 p99",
      "c16 calls/s",
      "c16 ratio",
      "hop CPU/call seq",
      "c16",
    ],
    ...PATHS.map((path) => {
      const f = figures[path];
      return [
        describe(path),
        ms(f.seq.p50Ms),
        ms(f.seq.p99Ms),
        added(path, f.addedP50Ms),
        added(path, f.addedP99Ms),
        ms(f.c16.p50Ms),
        ms(f.c16.p99Ms),
        f.c16.callsPerSec.toFixed(0),
        f.c16Ratio.toFixed(2),
        SPECS[path].via === "direct" ? "—" : ms(f.cpuMsPerCall.seq.hop),
        SPECS[path].via === "direct" ? "—" : ms(f.cpuMsPerCall.c16.hop),
      ];
    }),
  ]);
  console.log(
    "  (latencies in ms, sequential unless c16; hop CPU: the gateway's or the bare proxy's process)",
  );
  console.log("");
  printTable([
    ["CPU per call (ms)", ...PROCESSES.flatMap((name) => PHASES.map((phase) => `${name} ${phase}`))],
    ...PATHS.map((path) => [
      describe(path),
      ...PROCESSES.flatMap((name) => PHASES.map((phase) => ms(figures[path].cpuMsPerCall[phase][name]))),
    ]),
  ]);
  console.log(
    "  (hop CPU during direct calls is the observed gateway's background: poller, sweeper; CPU is read from /proc, 10 ms ticks)",
  );
  console.log("");
  const bare = figures.bare;
  console.log(
    `bare Node proxy hop (raw client, same rounds): added p50 ${signed(bareAddedP50)} ms, p99 ${signed(bare.addedP99Ms)} ms; c16 ${bare.c16Ratio.toFixed(2)}× direct; its CPU per call ${ms(bare.cpuMsPerCall.seq.hop)} ms seq, ${ms(bare.cpuMsPerCall.c16.hop)} ms c16`,
  );
  console.log(
    `targets: added p50 ≤ ${TARGET.addedP50VsBare}× the bare hop's (≤ ${ms(TARGET.addedP50VsBare * bareAddedP50)} ms), c16 throughput ≥ ${TARGET.c16Ratio}× direct with the same client`,
  );
  const verdict = (met: boolean) => (met ? "met" : "MISSED");
  const width = Math.max(...GOAL_PATHS.map((path) => describe(path).length));
  const targets: Record<string, { addedP50VsBare: number; addedP50: boolean; c16Ratio: boolean }> = {};
  for (const path of GOAL_PATHS) {
    const f = figures[path];
    const vsBare = f.addedP50VsBare!;
    targets[path] = {
      addedP50VsBare: vsBare,
      addedP50: vsBare <= TARGET.addedP50VsBare,
      c16Ratio: f.c16Ratio >= TARGET.c16Ratio,
    };
    console.log(
      `  ${describe(path).padEnd(width)}  added p50 ${signed(f.addedP50Ms)} ms = ${vsBare.toFixed(2)}× bare: ${verdict(targets[path].addedP50)}; c16 ${f.c16Ratio.toFixed(2)}× ${directOf(path) === "direct" ? "raw" : "sdk"} direct: ${verdict(targets[path].c16Ratio)}`,
    );
  }
  // The cost of seeing everything: each observed path against the same path with it off.
  // On these two cores the emulator is a process beside the others, and writing each call's audit event
  // costs it CPU that AWS's DynamoDB spends elsewhere. At concurrency 16 the cores are saturated, so the
  // throughput follows the CPU per call of all the processes: the ratio without the emulator's share is
  // at most the measured one scaled by (CPU per call on) / (CPU per call on − the emulator's per event)
  // (an upper bound: the writes land partly in other batches' time, and the cores may not be saturated).
  const c16CpuPerCall = (path: PathName) => {
    const { hop, upstream, client } = figures[path].cpuMsPerCall.c16;
    return hop + upstream + client;
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
        `  ${describe(path as PathName).padEnd(width)}  p50 on/off ${o.p50Ratio.toFixed(3)} (pooled ${o.pooledP50Ratio.toFixed(3)}, added p50 ${signed(o.addedP50DeltaMs)} ms); c16 throughput on/off ${o.c16Ratio.toFixed(3)} (pooled ${o.pooledC16Ratio.toFixed(3)}${o.c16RatioWithoutEmulatorAudit === undefined ? "" : `; ${o.c16RatioWithoutEmulatorAudit.toFixed(3)} at most without the emulator's audit CPU`}): ${o.met ? "met" : "MISSED"}`,
      );
    }
    if (auditCost)
      console.log(
        `  one audit event's write (${CALIBRATION_EVENTS} written after the paths ran, batches of 100): the emulator ${ms(auditCost.emulatorMs)} ms CPU, its writer ${ms(auditCost.writerMs)} ms CPU (moto answers Connection: close, so every request of 25 opens a connection)`,
      );
  }
  const rounded = <T>(value: T): T =>
    JSON.parse(JSON.stringify(value), (_key, item) =>
      typeof item === "number" && !Number.isInteger(item) ? Number(item.toFixed(3)) : item,
    );
  console.log(
    `BENCH_PROXY ${JSON.stringify({
      rounds: ROUNDS,
      callsPerRound: CALLS_PER_ROUND,
      c16CallsPerRound: C16_CALLS_PER_ROUND,
      concurrency: CONCURRENCY,
      target: TARGET,
      bareHop: rounded({
        addedP50Ms: bareAddedP50,
        addedP99Ms: bare.addedP99Ms,
        c16Ratio: bare.c16Ratio,
        cpuMsPerCall: { seq: bare.cpuMsPerCall.seq.hop, c16: bare.cpuMsPerCall.c16.hop },
      }),
      paths: rounded(figures),
      met: rounded(targets),
      observability: rounded(observability),
      otlp,
      ...(auditCost ? { auditWriteCpuMs: rounded(auditCost) } : {}),
    })}`,
  );
}
