/**
 * What the system costs, on paper from measured counts. On the dev stack (`scripts/dev.ts` in its own
 * process, SWEEP_INTERVAL_SECONDS=3600 so only this bench sweeps; the emulator behind the counting
 * proxy, which also meters each DynamoDB request's units; one upstream with a 20-tool catalogue behind
 * a bearer token, which every server points at, so each holds a sealed header):
 *
 *   1. per operation, the process's idle background taken out — AWS requests by kind (DynamoDB by
 *      operation, with the read and write units each consumed; KMS; SQS) and the stack process's CPU:
 *      a warm call by REST (admin token, API key), by `/mcp/{server}` and by `/mcp`; a cold call (a
 *      server's first in a warm process: its session opened, its sealed header with it); the sessions
 *      a listening gateway keeps open; the worker's liveness check and full probe of an unchanged
 *      server (jobs of sweeps this bench runs) and the sweep function's own run (fitted from runs at
 *      two sizes); an admin list page; a create (until connected); an edit; a fresh directory's full
 *      read; an audit event's write; and, as lines of their own, what a gateway process does per
 *      second rather than per call (its look at the change feed, its calls history);
 *   2. with AWS's unit prices (scripts/bench/aws-prices.ts) and the shapes infra/ deploys (read from
 *      it): a million warm calls per path, 1,000 and 10,000 servers swept for a month, what 1,000
 *      calls/s need of DynamoDB and Lambda, the month's fixed charges — and the largest line of each,
 *      with what would cut it. What is not measured is in ASSUME below, printed with the tables.
 * Ends with one `BENCH_COST {json}` line. With `--write-docs` (or BENCH_COST_WRITE_DOCS=1) the tables
 * go to docs/operations.md too, between `<!-- cost:begin -->` and `<!-- cost:end -->`.
 *
 *   BENCH_COST_CALLS    warm calls per path (default 200)
 *   BENCH_COST_CREATES  servers created (default 60, at least 41)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { Directory } from "@mcpgw/api";
import { auditPartition, createStore, loadAwsConfig, TABLE_KEYS } from "@mcpgw/aws";
import { createLogger, LATENCY_RINGS, MAX_LISTING_AGE_MS } from "@mcpgw/core";
import { MAX_SERVERS } from "@mcpgw/telemetry";
import { runSweep } from "@mcpgw/worker";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PRODUCTION_STAGE, runnerScaling, STAGES } from "../../infra/stages";
import { MAX_LISTENED_SERVERS } from "../../packages/api/src/gateway/mcp-listening";
import { startAwsCounter } from "../lib/aws-counter";
import { connectSdkClient, measure, queueDrained, stopper, until } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { cpuTimeMs, freePort, percentile, ROOT, startTsProcess } from "../lib/processes";
import { PRICES, PRICES_AS_OF, PRICES_REGION } from "./aws-prices";
import {
  type Architecture,
  type Assumptions,
  addMetered,
  type Capacity,
  type CostLine,
  capacityAt,
  emptyUsage,
  type FunctionShape,
  filledRingSize,
  fixedMonth,
  largest,
  Meter,
  metricsDollars,
  millionWarmCalls,
  minus,
  type OpFigure,
  only,
  perRequest,
  plus,
  repriced,
  requestCount,
  type SweepInputs,
  scaled,
  sum,
  sweptMonth,
  type TableShape,
  type Usage,
  unitsOf,
  usageDollars,
  type WarmCallInputs,
  without,
  writeUnits,
} from "./cost-model";

const CALLS = Number(process.env.BENCH_COST_CALLS ?? 200);
/** Servers created: at least the first call's, the cold calls' and the edits' (all distinct). */
const CREATES = Math.max(41, Number(process.env.BENCH_COST_CREATES ?? 60));
/** Servers created before the first sweep (the sweep function's cost is fitted from two sizes). */
const FIRST_CREATES = 20;
const COLD = 20;
const LISTS = 20;
const EDITS = 20;
const WARMUP = 20;
const IDLE_MS = 8_000;
/** The audit writer's and the calls history's flush (1 s) and its write: a window waits it out. */
const FLUSH_MS = 1_500;
const TOKEN = "bench-admin-token";
const UPSTREAM_TOKEN = "bench-upstream-token";
const TOOL = "crm_create_contact";
const ARGS = { email: "ada@example.com", phone: "+1 555 0100" };
const WRITE_DOCS = process.argv.includes("--write-docs") || process.env.BENCH_COST_WRITE_DOCS === "1";
const COST_DOC = join(ROOT, "docs/operations.md");
const BEGIN = "<!-- cost:begin -->";
const END = "<!-- cost:end -->";

/**
 * The shapes infra/ deploys, read from its source (infra/api.ts, infra/worker.ts, infra/runner.ts;
 * production's runner minimum from infra/stages.ts), so the model follows an edit there; a shape it
 * cannot find stops the bench with a sentence.
 */
function readDeployed() {
  const source = (file: string) => readFileSync(join(ROOT, "infra", file), "utf8");
  /** The first match of `pattern` in what follows `start` in `file` (the piece of compute's options). */
  const after = (file: string, start: string, pattern: RegExp, fallback?: string): string => {
    const text = source(file);
    const at = text.indexOf(start);
    const found = at < 0 ? undefined : pattern.exec(text.slice(at, at + 2_000))?.[1];
    if (found !== undefined) return found;
    if (fallback !== undefined) return fallback;
    throw new Error(`cost: no ${pattern} after ${start} in infra/${file}: read the deployed shape anew`);
  };
  const fn = (file: string, start: string): FunctionShape => ({
    memoryMb: Number(after(file, start, /memory: "(\d+) MB"/)),
    // Lambda's default architecture is x86_64.
    arch: after(file, start, /architecture: "(arm64|x86_64)"/, "x86_64") as Architecture,
  });
  const schedule = after("worker.ts", 'sst.aws.Cron("HealthSweep"', /schedule: "rate\((\d+) minutes?\)"/);
  const runner = 'sst.aws.Service("StdioRunner"';
  return {
    gateway: fn("api.ts", 'sst.aws.Function("Gateway"'),
    admin: fn("api.ts", 'sst.aws.Function("Admin"'),
    worker: fn("worker.ts", "jobQueue.subscribe("),
    sweep: { ...fn("worker.ts", 'sst.aws.Cron("HealthSweep"'), everySeconds: Number(schedule) * 60 },
    runner: {
      vcpu: Number(after("runner.ts", runner, /cpu: "([\d.]+) vCPU"/)),
      memoryGb: Number(after("runner.ts", runner, /memory: "([\d.]+) GB"/)),
      // Fargate's default platform is x86_64 (the runner's image is built for it).
      arch: after("runner.ts", runner, /architecture: "(arm64|x86_64)"/, "x86_64") as Architecture,
      minTasks: runnerScaling(STAGES[PRODUCTION_STAGE] ?? {}).min,
    },
    // Managed NAT gateways in production, one per availability zone of the VPC.
    natGateways: Number(after("runner.ts", 'sst.aws.Vpc("Vpc"', /az: (\d+)/)),
    // The sealing key and the token-signing key (infra/storage.ts).
    kmsKeys: (source("storage.ts").match(/new aws\.kms\.Key\(/g) ?? []).length,
  };
}
const DEPLOYED = readDeployed();

/** What the model assumes (printed with the results; change them here). */
const ASSUME: Assumptions = {
  fullVcpuMemoryMb: 1769,
  awsLatencyMs: 5,
  upstreamMs: 50,
  upstreamRoundTrips: { check: 1, probe: 3 },
  headerBytesPerAwsRequest: 1_200,
  logBytesPerInvocation: 1_000,
  auditRetentionDays: 30,
  directoryServers: 1_000,
  directoryFullReadSeconds: 300,
  workerJobsPerInvocation: 1,
  sqsRequestsPerWorkerInvocation: 2,
  sweepSendConcurrency: 5,
  hoursPerMonth: 730,
};

/** The table as the meter sees it: keys and indexes of packages/aws/src/table.ts, the lines named apart. */
function tableShape(): TableShape {
  return {
    partitionKey: TABLE_KEYS.partition,
    sortKey: TABLE_KEYS.sort,
    indexes: [
      {
        name: TABLE_KEYS.byKindIndex,
        hashKey: TABLE_KEYS.kind,
        rangeKey: TABLE_KEYS.kindSort,
        projection: "all",
      },
      {
        name: TABLE_KEYS.byChangeIndex,
        hashKey: TABLE_KEYS.changeFeed,
        rangeKey: TABLE_KEYS.changedAt,
        projection: "keys",
      },
    ],
    lines: [
      { suffix: "change feed", index: TABLE_KEYS.byChangeIndex },
      { suffix: "audit", pkPrefix: auditPartition("") },
      { suffix: "calls history", pkPrefix: "LATENCY#", sk: "calls" },
      { suffix: "probe history", pkPrefix: "LATENCY#", sk: "probe" },
    ],
    audit: { pkPrefix: auditPartition(""), eventsAttribute: "events" },
  };
}

/** A point in time: what both counters metered so far, and the CPU spent. */
interface Mark {
  stack: Usage;
  bench: Usage;
  stackCpuMs: number;
  benchCpuMs: number;
  at: number;
}

/** What happened between a mark and now. */
interface Window {
  stack: Usage;
  bench: Usage;
  stackCpuMs: number;
  benchCpuMs: number;
  seconds: number;
}

/** The background of the stack process: its usage and CPU per second, idle. */
interface Background {
  usage: Usage;
  cpuMsPerSecond: number;
}

/** The dev worker's requests to its queue (deployed, the event-source mapping's), not an operation's. */
const WORKER_POLLS = ["SQS.ReceiveMessage", "SQS.DeleteMessageBatch"];

const PATH_NAMES = ["restAdmin", "restKey", "mcpServer", "mcpAggregate"] as const;
type PathName = (typeof PATH_NAMES)[number];
const PATH_LABELS: Record<PathName, string> = {
  restAdmin: "REST, admin token",
  restKey: "REST, API key",
  mcpServer: "`/mcp/{server}`, API key",
  mcpAggregate: "`/mcp`, API key",
};

/** What would cut each line, by its id. */
const REMEDIES: Record<string, string> = {
  "lambda-duration":
    "Lambda bills the wait for the upstream: most of a call's billed time is the upstream's answer (the assumed upstream time). Less memory stretches the CPU part; serving the data plane from containers (many calls share a task while they wait) removes the per-call wait from the bill.",
  "lambda-requests":
    "a fixed price per invocation: only fewer invocations (containers instead of Lambda) cut it.",
  "audit-write":
    "`AUDIT_SINK=log` writes the event as a log line instead (CloudWatch Logs at $0.50/GB), or `off`; in the table, one item and one index entry per invocation are the floor.",
  "audit-storage": "a shorter `AUDIT_RETENTION_DAYS`.",
  "call-writes": "the rate-limit leases: a larger slice per lease (fewer leases per call).",
  "call-reads": "caching what the call reads (keys) longer per environment.",
  "directory-full": "reading everything less often than every 5 min per environment, or fewer environments.",
  "directory-feed": "looking at the change feed less often than once a second.",
  "calls-history": "a coarser calls history (fewer writes per environment and server).",
  "worker-requests":
    "fewer invocations: a batching window on the queue's event-source mapping, so each invocation takes up to 10 jobs.",
  "worker-duration":
    "batching jobs per invocation (the waits overlap), or checks that wait less on the upstream.",
  "job-writes":
    "writing less per check: a check that finds the server as it was still writes a point to its latency history, a ring charged whole at each write — a smaller ring, or a point every few checks.",
  "job-reads": "reading less per job (the status and config a job reads first).",
  metrics:
    "fewer custom metrics: the probe metrics carry a `server` label (one EMF metric per server and label set) — drop it from the EMF lines, or lower the server cap.",
  logs: "fewer log bytes per invocation (EMF lines, log level).",
  nat: "a VPC gateway endpoint for DynamoDB (free) takes the table's traffic off the NAT gateways.",
  "sweep-lambda": "a longer sweep interval.",
  "job-kms":
    "keeping a server's opened headers (or their data key) for a few minutes in the worker's environment: a check of an unchanged server would then ask KMS nothing (KMS is paid per request, whatever the answer).",
  "sweep-reads": "a longer sweep interval.",
  "sweep-sqs": "a longer sweep interval.",
  storage: "smaller catalogues and histories.",
};

const { stops, stopAll } = stopper();
try {
  const emulator = await startEmulator((line) => console.error(line));
  stops.push(() => emulator.stop());
  const quiet = createStore(loadAwsConfig()); // straight to the emulator: waiting costs no counts
  const meter = new Meter(tableShape());
  const stackUsage = emptyUsage();
  const benchUsage = emptyUsage();
  const stackCounter = await startAwsCounter(emulator.endpoint, (x) =>
    addMetered(stackUsage, meter.meter(x)),
  );
  stops.push(() => stackCounter.stop());
  const benchCounter = await startAwsCounter(emulator.endpoint, (x) =>
    addMetered(benchUsage, meter.meter(x)),
  );
  stops.push(() => benchCounter.stop());
  // The sweep function's and a fresh directory's requests, counted apart from the stack's.
  const benchStore = createStore({ ...loadAwsConfig(), endpoint: benchCounter.url });
  const logger = createLogger({ level: "warn" });

  const upstream = await startTsProcess(
    "tests/fixtures/mcp-upstream-cli.ts",
    ["--name", "cost", "--catalogue", "20", "--require-bearer", UPSTREAM_TOKEN],
    /^listening (\S+)$/,
  );
  stops.push(() => upstream.stop());
  const upstreamUrl = upstream.match[1]!;
  const dev = await startTsProcess("scripts/dev.ts", [], /MCP Gateway ready at (\S+)/, {
    AWS_ENDPOINT_URL: stackCounter.url,
    ADMIN_TOKEN: TOKEN,
    PORT: String(await freePort()),
    SWEEP_INTERVAL_SECONDS: "3600",
  });
  stops.push(() => dev.stop());
  const gateway = dev.match[1]!;
  const devPid = dev.child.pid!;

  const mark = (): Mark => {
    const own = process.cpuUsage();
    return {
      stack: structuredClone(stackUsage),
      bench: structuredClone(benchUsage),
      stackCpuMs: cpuTimeMs(devPid),
      benchCpuMs: (own.user + own.system) / 1000,
      at: performance.now(),
    };
  };
  const since = (from: Mark): Window => {
    const now = mark();
    return {
      stack: minus(now.stack, from.stack),
      bench: minus(now.bench, from.bench),
      stackCpuMs: now.stackCpuMs - from.stackCpuMs,
      benchCpuMs: now.benchCpuMs - from.benchCpuMs,
      seconds: (now.at - from.at) / 1000,
    };
  };
  const idle = async (): Promise<Background> => {
    const from = mark();
    await sleep(IDLE_MS);
    const window = since(from);
    return {
      usage: scaled(window.stack, 1 / window.seconds),
      cpuMsPerSecond: window.stackCpuMs / window.seconds,
    };
  };
  /** The stack's usage and CPU per operation in `windows`, the background (and the feed's looks) taken out. */
  const figure = (windows: Window[], count: number, background: Background): OpFigure => {
    let usage = emptyUsage();
    let cpuMs = 0;
    for (const window of windows) {
      usage = plus(
        usage,
        minus(
          without(window.stack, "change feed", "calls history"),
          scaled(background.usage, window.seconds),
        ),
      );
      cpuMs += Math.max(0, window.stackCpuMs - background.cpuMsPerSecond * window.seconds);
    }
    return { count, usage: scaled(usage, 1 / count), cpuMs: cpuMs / count };
  };

  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const api = async (method: string, path: string, body?: unknown, token = TOKEN) => {
    const response = await fetch(`${gateway}${path}`, {
      method,
      headers: { ...headers, authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  const allConnected = async (count: number) =>
    [...(await quiet.statuses.list()).values()].filter((status) => status.state === "connected").length >=
    count;
  const settle = async (servers: number) => {
    await until(() => allConnected(servers), 120_000);
    await until(() => queueDrained(quiet), 120_000);
    await sleep(FLUSH_MS);
  };
  const name = (i: number) => `srv-${String(i).padStart(2, "0")}`;
  const create = async (i: number) => {
    const created = await api("POST", "/v1/servers", {
      name: name(i),
      url: upstreamUrl,
      headers: { Authorization: `Bearer ${UPSTREAM_TOKEN}` },
    });
    if (created.status !== 201)
      throw new Error(`POST /v1/servers → ${created.status} ${JSON.stringify(created.body)}`);
    await sleep(100); // ten a second: each refresh of the directory reads the few that changed
  };
  const sweep = async (options: { maxListingAgeMs?: number }, store = benchStore) => {
    const from = mark();
    const swept = await runSweep({ store, logger }, { spreadSeconds: 0, ...options });
    const skipped = (swept as { skipped?: string }).skipped;
    if (skipped) throw new Error(`the bench's sweep was skipped (${skipped})`);
    return { swept, fn: since(from), from };
  };
  // The sweep function alone: its jobs sent to a queue of their own that nobody reads (so the stack's
  // worker is not at work meanwhile, on this machine's cores and through this process's proxies).
  let sinks = 0;
  const sweepFunction = async (runs = 7): Promise<Window[]> => {
    const windows: Window[] = [];
    for (let run = 0; run < runs; run++) {
      const queueName = `cost-sweep-sink-${sinks++}`;
      await quiet.clients.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
      const store = createStore({ ...loadAwsConfig(), endpoint: benchCounter.url, queueName });
      await store.jobs.url();
      windows.push((await sweep({}, store)).fn);
    }
    return windows;
  };

  console.error("cost: stack ready; its background, then servers registered");
  await benchStore.jobs.url(); // resolved once (deployed, the queue's URL is linked)
  await sweep({}); // nothing to sweep yet: the sweep's code warmed in this process
  await sleep(3_000);
  const bootBackground = await idle();

  // Creates, in two rounds; the sweep function between them (its cost at two sizes, for its fit).
  let from = mark();
  for (let i = 0; i < FIRST_CREATES; i++) await create(i);
  await settle(FIRST_CREATES);
  const createWindows = [since(from)];
  const small = await sweepFunction();
  from = mark();
  for (let i = FIRST_CREATES; i < CREATES; i++) await create(i);
  await settle(CREATES);
  createWindows.push(since(from));
  const creates = figure(createWindows, CREATES, bootBackground);

  console.error("cost: the background again, then sweeps");
  const background = await idle();

  // A sweep of unchanged servers, freshly listed: liveness checks; then one past the listing age: probes.
  const checked = await sweep({});
  await until(() => queueDrained(quiet), 120_000);
  await sleep(FLUSH_MS);
  const checks = figure([since(checked.from)], checked.swept.checks, background);
  const probed = await sweep({ maxListingAgeMs: 0 });
  await until(() => queueDrained(quiet), 120_000);
  await sleep(FLUSH_MS);
  const probes = figure([since(probed.from)], probed.swept.probes, background);
  if (checked.swept.checks !== CREATES || probed.swept.probes !== CREATES)
    throw new Error(
      `swept ${checked.swept.checks} checks and ${probed.swept.probes} probes of ${CREATES} servers`,
    );
  // The sweep function: fixed + per server, from its runs at FIRST_CREATES and CREATES servers.
  const sweepFit = fitSweep(
    { servers: FIRST_CREATES, windows: small },
    { servers: CREATES, windows: await sweepFunction() },
  );

  // Warm calls: each path warmed, then CALLS calls one after another. REST first, and the cold calls
  // before any MCP client connects: a client's listen stream opens sessions to the servers in its scope.
  console.error("cost: warm calls, cold calls");
  const keys: string[] = [];
  for (const path of ["rest", "mcp", "aggregate"]) {
    const created = await api("POST", "/v1/keys", { name: `cost-${path}` });
    if (created.status !== 201) throw new Error(`POST /v1/keys → ${created.status}`);
    keys.push(String(created.body.key));
  }
  const restCall =
    (token: string, server = name(0)) =>
    async () => {
      const answer = await api("POST", `/v1/tools/${server}__${TOOL}/call`, { arguments: ARGS }, token);
      if (answer.status !== 200)
        throw new Error(`REST call → ${answer.status} ${JSON.stringify(answer.body)}`);
    };
  const warm = {} as Record<PathName, Warm>;
  let busySeconds = 0;
  let feedLooks = 0;
  const warmPath = async (path: PathName, call: () => Promise<void>) => {
    await measure(call, WARMUP, 1);
    await sleep(FLUSH_MS);
    const start = mark();
    await measure(call, CALLS, 1);
    const callsSeconds = (performance.now() - start.at) / 1000;
    await sleep(FLUSH_MS);
    const window = since(start);
    busySeconds += callsSeconds;
    feedLooks += window.stack.lines["DynamoDB.Query (change feed)"]?.requests ?? 0;
    warm[path] = {
      ...figure([window], CALLS, background),
      auditEvents: window.stack.audit.events / CALLS,
      auditItems: window.stack.audit.items / CALLS,
    };
  };
  await warmPath("restAdmin", restCall(TOKEN));
  await warmPath("restKey", restCall(keys[0]!));

  // Cold: the first call to each of COLD servers this process holds no session to.
  from = mark();
  for (let i = 1; i <= COLD; i++) await restCall(TOKEN, name(i))();
  await sleep(FLUSH_MS);
  const cold = figure([since(from)], COLD, background);

  // MCP clients. While one listens, the gateway keeps a session open to each server that announces
  // list changes (up to 64, opened a few at a time): what opening those costs, per session opened.
  const decrypts = () => stackUsage.lines["KMS.Decrypt"]?.requests ?? 0;
  const openedAll = async () => {
    let seen = -1;
    while (decrypts() !== seen) {
      seen = decrypts();
      await sleep(2_000);
    }
  };
  const connect = (path: string, token: string) => connectSdkClient(`${gateway}${path}`, token, stops);
  const mcpCall = (client: Client, tool: string) => async () => {
    const result = await client.callTool({ name: tool, arguments: ARGS });
    if (result.isError) throw new Error(`MCP call failed: ${JSON.stringify(result.content)}`);
  };
  from = mark();
  const opensBefore = decrypts();
  const viaServer = await connect(`/mcp/${name(0)}`, keys[1]!);
  const viaAll = await connect("/mcp", keys[2]!);
  await openedAll();
  const listenOpened = decrypts() - opensBefore;
  const listenSessions = figure([since(from)], Math.max(1, listenOpened), background);
  await warmPath("mcpServer", mcpCall(viaServer, TOOL));
  await warmPath("mcpAggregate", mcpCall(viaAll, `${name(0)}__${TOOL}`));

  console.error("cost: lists, edits, a fresh directory");
  from = mark();
  let listed = 0;
  for (let i = 0; i < LISTS; i++) {
    const page = await api("GET", "/v1/servers?limit=100");
    if (page.status !== 200) throw new Error(`list → ${page.status}`);
    listed = (page.body.servers as unknown[]).length;
  }
  await sleep(FLUSH_MS);
  const lists = figure([since(from)], LISTS, background);

  from = mark();
  for (let i = 0; i < EDITS; i++) {
    const edited = await api("PATCH", `/v1/servers/${name(COLD + 1 + i)}`, { timeoutSeconds: 31 + i });
    if (edited.status !== 200) throw new Error(`PATCH → ${edited.status} ${JSON.stringify(edited.body)}`);
  }
  await sleep(FLUSH_MS);
  const edits = figure([since(from)], EDITS, background);

  // A fresh environment's directory: everything read once (the bench's store; per server registered).
  const fullReads: Window[] = [];
  for (let i = 0; i < 3; i++) {
    const start = mark();
    await new Directory(benchStore, logger).snapshot();
    fullReads.push(since(start));
  }
  const fullRead: OpFigure = {
    count: 3,
    usage: scaled(
      fullReads.reduce((u, w) => plus(u, w.bench), emptyUsage()),
      1 / 3 / CREATES,
    ),
    cpuMs: fullReads.reduce((s, w) => s + w.benchCpuMs, 0) / 3 / CREATES,
  };

  // The metrics a server's probes report (names × label sets), and a called tool's.
  const metrics = await (await fetch(`${gateway}/metrics`)).text();

  // Audit: a Lambda invocation writes its one event as a pack of one (the cold calls wrote such packs).
  const audit = stackUsage.audit;
  if (audit.singles === 0) throw new Error("no audit pack of one event was written");
  // The latency histories are rings written whole at each point: priced full (as after 2 h), not as
  // the young rings of this run.
  const ringUnits = (kind: "probe" | "calls") => {
    const rings = meter.itemsUnder("LATENCY#", kind);
    if (rings.length === 0) throw new Error(`no ${kind} history was written`);
    const units = rings.map((ring) => writeUnits(filledRingSize(ring, LATENCY_RINGS[kind].slots)));
    return units.reduce((total, n) => total + n, 0) / units.length;
  };
  const probeHistoryUnits = ringUnits("probe");
  const atFilledRing = (f: OpFigure): OpFigure => ({
    ...f,
    usage: repriced(f.usage, "probe history", probeHistoryUnits),
  });

  report({
    creates,
    checks: atFilledRing(checks),
    probes: atFilledRing(probes),
    historyUnits: { probe: probeHistoryUnits, calls: ringUnits("calls") },
    sweepFit,
    warm,
    cold,
    listenSessions,
    lists,
    listed,
    edits,
    fullRead,
    background,
    feed: {
      looksPerSecond: feedLooks / busySeconds,
      readUnits: perRequest(only(stackUsage, "change feed")).readUnits,
    },
    auditPack: {
      writeUnits: audit.singleWriteUnits / audit.singles,
      bytes: audit.singleBytes / audit.singles,
    },
    audit,
    metricsPerServer: seriesWith(metrics, "mcpgw_probe_", "server").perServer,
    metricsPerTool: seriesWith(metrics, "mcpgw_tool_call", "server").perServer,
    storedPerServer: (() => {
      const stored = meter.storedBytes(["SERVER#", "LATENCY#", "NAME#"]);
      return { tableBytes: stored.tableBytes / CREATES, indexBytes: stored.indexBytes / CREATES };
    })(),
  });
} finally {
  await stopAll();
}

/**
 * The sweep function's run as fixed + per-server parts, from runs at two sizes: their mean usage, their
 * median CPU (a run's CPU is this process's, which a collection or a proxied request may swell).
 */
function fitSweep(
  a: { servers: number; windows: Window[] },
  b: { servers: number; windows: Window[] },
): { fixed: OpFigure; perServer: OpFigure } {
  const at = ({ windows }: { windows: Window[] }) => ({
    usage: scaled(
      windows.reduce((u, w) => plus(u, w.bench), emptyUsage()),
      1 / windows.length,
    ),
    cpuMs: percentile(
      windows.map((w) => w.benchCpuMs),
      50,
    ),
  });
  const small = at(a);
  const large = at(b);
  const span = b.servers - a.servers;
  const perServer = scaled(minus(large.usage, small.usage), 1 / span);
  const perServerCpu = Math.max(0, (large.cpuMs - small.cpuMs) / span);
  const runs = a.windows.length + b.windows.length;
  return {
    fixed: {
      count: runs,
      usage: minus(small.usage, scaled(perServer, a.servers)),
      cpuMs: Math.max(0, small.cpuMs - perServerCpu * a.servers),
    },
    perServer: { count: runs, usage: perServer, cpuMs: perServerCpu },
  };
}

/** Distinct (family, label set) series of the metric families starting with `prefix`, per `label` value. */
function seriesWith(text: string, prefix: string, label: string): { series: number; perServer: number } {
  const series = new Set<string>();
  const values = new Set<string>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const match = /^([a-z_]+?)(?:_bucket|_sum|_count)?\{(.*)\}/.exec(line);
    if (!match) continue;
    const labels = (match[2] ?? "").split(",").filter((pair) => !pair.startsWith("le="));
    const value = labels.find((pair) => pair.startsWith(`${label}=`));
    if (!value) continue;
    values.add(value);
    series.add(`${match[1]}{${labels.sort().join(",")}}`);
  }
  return { series: series.size, perServer: values.size ? series.size / values.size : 0 };
}

/** A warm call's figures, and the audit events and packs the dev process wrote per call. */
type Warm = OpFigure & { auditEvents: number; auditItems: number };

interface Measured {
  creates: OpFigure;
  checks: OpFigure;
  probes: OpFigure;
  sweepFit: { fixed: OpFigure; perServer: OpFigure };
  warm: Record<PathName, Warm>;
  cold: OpFigure;
  /** Sessions a listening gateway opens to servers announcing changes, per session opened. */
  listenSessions: OpFigure;
  lists: OpFigure;
  listed: number;
  edits: OpFigure;
  fullRead: OpFigure;
  background: Background;
  /** The change feed while calls are served: looks a second, read units each. */
  feed: { looksPerSecond: number; readUnits: number };
  auditPack: { writeUnits: number; bytes: number };
  audit: Usage["audit"];
  /** Write units of one point written to a full latency history (each ring is written whole). */
  historyUnits: { probe: number; calls: number };
  metricsPerServer: number;
  metricsPerTool: number;
  storedPerServer: { tableBytes: number; indexBytes: number };
}

/** Dollars as the tables print them: cents and up to two decimals, small sums to two figures. */
function dollars(value: number): string {
  if (value === 0) return "$0";
  if (value >= 100) return `$${value.toFixed(0)}`;
  if (value >= 1) return `$${value.toFixed(2)}`;
  if (value >= 0.01) return `$${value.toFixed(3)}`;
  if (value >= 0.0001) return `$${value.toPrecision(2)}`;
  return "< $0.0001";
}

/** A count: whole, or to `digits` decimals. */
function n(value: number, digits = 2): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) < 0.01 ? value.toPrecision(1) : value.toFixed(digits);
}

/** `GetItem 0.5, Query 1` for the lines of one service (those under 0.005 a time left out). */
function requestList(usage: Usage, service: string): string {
  const parts = Object.entries(usage.lines)
    .filter(([line, u]) => line.startsWith(`${service}.`) && u.requests >= 0.005)
    .map(([line, u]) => `${line.slice(service.length + 1)} ${n(u.requests)}`);
  return parts.length ? parts.join(", ") : "—";
}

/** A markdown table: a header row, its alignment, the rows. */
function table(rows: string[][], align: string[]): string[] {
  return [
    `| ${rows[0]!.join(" | ")} |`,
    `| ${align.join(" | ")} |`,
    ...rows.slice(1).map((row) => `| ${row.join(" | ")} |`),
    "",
  ];
}

function report(m: Measured): void {
  const p = PRICES;
  const a = ASSUME;
  const out: string[] = [];
  const awsDollars = (usage: Usage) => {
    const priced = usageDollars(usage, p, a);
    return priced.reads + priced.writes + priced.kms + priced.sqs;
  };
  const row = (what: string, f: OpFigure) => {
    const units = unitsOf(f.usage);
    return [
      what,
      String(f.count),
      requestList(f.usage, "DynamoDB"),
      n(units.read),
      n(units.write),
      requestList(f.usage, "KMS"),
      requestList(f.usage, "SQS"),
      dollars(awsDollars(f.usage) * 1e6),
      n(f.cpuMs),
    ];
  };
  /** A gateway or admin operation's own requests: not the dev worker's queue polls that fell in its window. */
  const ownOnly = (f: OpFigure): OpFigure => ({ ...f, usage: without(f.usage, ...WORKER_POLLS) });
  /** A call's own requests, its audit write apart (priced per invocation below). */
  const callOnly = (f: OpFigure): OpFigure => ({ ...f, usage: without(ownOnly(f).usage, "audit") });

  out.push(
    `Measured by \`npm run bench -- cost\` on the dev stack (one process: gateway, admin, worker, runner) with ${CREATES} servers registered (a 20-tool catalogue each, one sealed header), priced with AWS's on-demand prices for ${PRICES_REGION} as of ${PRICES_AS_OF} (scripts/bench/aws-prices.ts). Per operation, with the process's idle background taken out. Read and write units are DynamoDB's, judged from each request and its answer on the wire: item sizes, eventually consistent reads at half, transactions twice, every index entry written again. "AWS $ per million" is DynamoDB, KMS and SQS alone (no Lambda).`,
    "",
    ...table(
      [
        [
          "per operation",
          "n",
          "DynamoDB requests",
          "read units",
          "write units",
          "KMS",
          "SQS",
          "AWS $ per million",
          "stack CPU ms",
        ],
        ...PATH_NAMES.map((path) => row(`warm call, ${PATH_LABELS[path]}`, callOnly(m.warm[path]))),
        row(
          "cold call: a server's first in a gateway process or environment (its session opened)",
          callOnly(m.cold),
        ),
        row(
          `a listening session: MCP clients connected, the gateway keeps one open to each server announcing changes (≤ ${MAX_LISTENED_SERVERS}), per session`,
          ownOnly(m.listenSessions),
        ),
        row("liveness check of an unchanged server (worker job)", m.checks),
        row("full probe of an unchanged server (worker job)", m.probes),
        row("sweep function, per run", m.sweepFit.fixed),
        row("sweep function, per server", m.sweepFit.perServer),
        row(`admin list page (\`GET /v1/servers?limit=100\` of ${m.listed} servers)`, ownOnly(m.lists)),
        row("create (`POST /v1/servers`, until connected)", m.creates),
        row("edit (`PATCH /v1/servers/{name}`, `timeoutSeconds`)", ownOnly(m.edits)),
        row("a fresh directory's full read, per server", m.fullRead),
      ],
      ["---", "---:", "---", "---:", "---:", "---", "---", "---:", "---:"],
    ),
  );
  const idleOther = without(m.background.usage, "change feed", "calls history");
  const devPack = m.warm.restAdmin.auditEvents / Math.max(1e-9, m.warm.restAdmin.auditItems);
  out.push(
    `- **Audit**: an event stored alone (a Lambda invocation's pack of one) is ${n(m.auditPack.bytes, 0)} bytes: ${n(m.auditPack.writeUnits)} write units with its \`byKind\` index entry. The dev process packs a server's events of a second (${n(devPack, 0)} events a pack in the warm REST run); the call rows above leave the audit out, the bill below prices it per invocation.`,
    `- **Background of one gateway process**: its directory looks at the change feed ${n(m.feed.looksPerSecond)} times a second while it serves calls (${n(m.feed.readUnits)} read units each; idle, ${n(requestCount(only(m.background.usage, "change feed")), 2)}), and writes each called server's calls history once per 10 s slot; idle besides: ${requestList(idleOther, "DynamoDB")} DynamoDB and ${requestList(idleOther, "SQS")} SQS requests a second (the dev worker's queue polls), ${n(m.background.cpuMsPerSecond)} ms CPU a second. Not in the rows above.`,
    `- **Latency histories** are rings of ${LATENCY_RINGS.probe.slots} slots, and a point's write is charged the whole ring: priced full (as after 2 hours, not as this run's young rings), a probe or check point is ${n(m.historyUnits.probe)} write units, a server's calls point (each 10 s it was called) ${n(m.historyUnits.calls)}.`,
    `- The sweep function's and the fresh directory's CPU are this bench's process (its counting proxies included)${m.sweepFit.perServer.cpuMs === 0 ? "; the sweep's CPU per server is below what its runs at two sizes resolve" : ""}. The gateway's and admin's rows leave out the dev worker's queue polls that fell in their windows.`,
    "",
  );

  // A million warm calls, per path.
  const inputs = (path: PathName): WarmCallInputs => ({
    call: callOnly(m.warm[path]),
    auditPack: m.auditPack,
    feed: m.feed,
    fullReadUnitsPerServer: unitsOf(m.fullRead.usage).read,
    callsHistoryWriteUnits: m.historyUnits.calls,
    gateway: DEPLOYED.gateway,
  });
  const million = Object.fromEntries(
    PATH_NAMES.map((path) => [path, millionWarmCalls(inputs(path), p, a)]),
  ) as Record<PathName, { lines: CostLine[]; billedMs: number }>;
  const base = million.restKey;
  out.push(
    `**A million warm calls** (the gateway function: ${DEPLOYED.gateway.memoryMb} MB, ${DEPLOYED.gateway.arch}):`,
    "",
  );
  out.push(
    ...table(
      [
        ["line", ...PATH_NAMES.map((path) => PATH_LABELS[path])],
        ...base.lines.map((line, i) => [
          line.what.replace(/ \([\d.]+ ms billed each\)/, ""),
          ...PATH_NAMES.map((path) => dollars(million[path].lines[i]!.dollars)),
        ]),
        ["billed ms a call", ...PATH_NAMES.map((path) => n(million[path].billedMs, 1))],
        ["**total**", ...PATH_NAMES.map((path) => `**${dollars(sum(million[path].lines))}**`)],
      ],
      ["---", ...PATH_NAMES.map(() => "---:")],
    ),
  );
  const warmTop = largest(base.lines);
  const asLogLines = ((1_000_000 * m.auditPack.bytes) / 1e9) * p.cloudwatch.logsIngestPerGb;
  out.push(
    `Largest line: **${warmTop.what}**, ${dollars(warmTop.dollars)} of ${dollars(sum(base.lines))} (REST with a key). What would cut it: ${REMEDIES[warmTop.id] ?? "—"}${warmTop.id === "audit-write" ? ` As log lines the same events cost about ${dollars(asLogLines)} a million.` : ""}`,
    "",
    `Custom metrics besides: every (server, tool, outcome) called in a month is ${n(m.metricsPerTool, 0)} CloudWatch metrics (\`mcpgw_tool_call*\`), ${dollars(metricsDollars(m.metricsPerTool, p))} a month, whatever the calls.`,
    "",
  );

  // Servers swept for a month.
  const sweepInputs: SweepInputs = {
    sweepFixed: m.sweepFit.fixed,
    sweepPerServer: m.sweepFit.perServer,
    check: m.checks,
    probe: m.probes,
    metricsPerServer: m.metricsPerServer,
    metricServerCap: MAX_SERVERS,
    storedPerServer: m.storedPerServer,
    sweep: DEPLOYED.sweep,
    worker: DEPLOYED.worker,
    maxListingAgeMs: MAX_LISTING_AGE_MS,
  };
  const fleets = [1_000, 10_000] as const;
  const swept = Object.fromEntries(
    fleets.map((servers) => [servers, sweptMonth(servers, sweepInputs, p, a)]),
  ) as Record<number, CostLine[]>;
  const count = (servers: number) => `${servers.toLocaleString("en-US")} servers`;
  out.push(
    `**Servers kept swept for a month** (a sweep every ${DEPLOYED.sweep.everySeconds} s: a liveness check of each connected server, a full probe once its tools were listed ${MAX_LISTING_AGE_MS / 60_000} min ago; worker ${DEPLOYED.worker.memoryMb} MB, sweep function ${DEPLOYED.sweep.memoryMb} MB, both ${DEPLOYED.worker.arch}):`,
    "",
    ...table(
      [
        ["line", ...fleets.map(count)],
        ...swept[1_000]!.map((line, i) => [
          line.what.replace(/ \([^()]*\d[^()]*\)$/, ""),
          ...fleets.map((servers) => dollars(swept[servers]![i]!.dollars)),
        ]),
        ["**total**", ...fleets.map((servers) => `**${dollars(sum(swept[servers]!))}**`)],
      ],
      ["---", ...fleets.map(() => "---:")],
    ),
  );
  for (const servers of fleets) {
    const top = largest(swept[servers]!);
    out.push(
      `Largest line at ${count(servers)}: **${top.what}**, ${dollars(top.dollars)} of ${dollars(sum(swept[servers]!))}. What would cut it: ${REMEDIES[top.id] ?? "—"}`,
      "",
    );
  }

  // Capacity at 1,000 calls/s.
  const RATE = 1_000;
  const capacity = Object.fromEntries(
    PATH_NAMES.map((path) => [path, capacityAt(RATE, inputs(path), million[path].billedMs, p, a)]),
  ) as Record<PathName, Capacity>;
  const capRows: Array<[string, (c: Capacity) => string]> = [
    ["gateway Lambda concurrency (rate × billed duration)", (c) => n(c.concurrency, 0)],
    ["Lambda GB-seconds a second", (c) => n(c.gbSecondsPerSecond, 1)],
    ["DynamoDB read units a second (RCU, provisioned)", (c) => n(c.readUnitsPerSecond, 0)],
    ["DynamoDB write units a second (WCU, provisioned)", (c) => n(c.writeUnitsPerSecond, 0)],
    ["write units a second into the audit's day partition", (c) => n(c.auditPartitionWriteUnits, 0)],
    ["KMS requests a second", (c) => n(c.kmsPerSecond, 1)],
    ["DynamoDB a month, on-demand", (c) => dollars(c.onDemandMonthly)],
    ["DynamoDB a month, that capacity provisioned", (c) => dollars(c.provisionedMonthly)],
  ];
  const auditShare = capacity.restKey.auditPartitionWriteUnits / 1_000;
  out.push(
    `**At ${RATE.toLocaleString("en-US")} warm calls a second** (${a.directoryServers.toLocaleString("en-US")} servers registered):`,
    "",
    ...table(
      [
        ["", ...PATH_NAMES.map((path) => PATH_LABELS[path])],
        ...capRows.map(([what, get]) => [what, ...PATH_NAMES.map((path) => get(capacity[path]))]),
      ],
      ["---", ...PATH_NAMES.map(() => "---:")],
    ),
    `Every audit pack of a day goes to one partition (\`AUDIT#<day>\`, newest sort key last), and DynamoDB serves at most 1,000 write units a second per partition: at this rate the audit trail ${auditShare >= 1 ? "is at that limit (its writes would be throttled and retried: calls do not fail, events may be dropped)" : `takes ${n(auditShare * 100, 0)} % of it`}; a busy server's packs also share one \`byKind\` index partition. Lambda's default concurrency quota is 1,000 a region.`,
    "",
  );

  // Fixed charges.
  const fixed = fixedMonth(DEPLOYED, p, a);
  const streamHour = 3600 * (DEPLOYED.gateway.memoryMb / 1024) * p.lambda.perGbSecond[DEPLOYED.gateway.arch];
  out.push(
    "**Every month, whatever the load**:",
    "",
    ...table(
      [
        ["line", "a month"],
        ...fixed.map((line) => [line.what, dollars(line.dollars)]),
        ["**total**", `**${dollars(sum(fixed))}**`],
      ],
      ["---", "---:"],
    ),
    `An MCP client that keeps a listen stream open (a 2025 session's GET stream, a 2026 \`subscriptions/listen\`) holds a gateway environment while the stream lasts (15 min at most, then the client opens another): ${dollars(streamHour)} an hour, ${dollars(streamHour * a.hoursPerMonth)} a month per client connected all the time.`,
    "",
    `Assumptions (scripts/bench/cost.ts; not measured): an upstream answers a call in ${a.upstreamMs} ms — Lambda bills the wait, each 10 ms more is ${dollars(((1_000_000 * 10) / 1000) * (DEPLOYED.gateway.memoryMb / 1024) * p.lambda.perGbSecond[DEPLOYED.gateway.arch])} a million calls; a check is ${a.upstreamRoundTrips.check} round trip to it, a probe ${a.upstreamRoundTrips.probe}; an awaited AWS request takes ${a.awsLatencyMs} ms; CPU is this machine's, stretched by ${a.fullVcpuMemoryMb} MB ÷ memory below a whole vCPU; a worker invocation takes ${a.workerJobsPerInvocation} job (jobs spread over the interval arrive a few at a time) and makes ${a.sqsRequestsPerWorkerInvocation} SQS requests; ${a.headerBytesPerAwsRequest} bytes of headers an AWS request (through NAT: infra/ makes no VPC endpoints); ${a.logBytesPerInvocation} log bytes an invocation (Lambda's own lines and the EMF metric lines); a busy gateway environment reads everything every ${a.directoryFullReadSeconds / 60} min; audit events are kept ${a.auditRetentionDays} days; ${a.hoursPerMonth} hours a month; no free tier.`,
  );
  const text = out.join("\n");
  console.log(text);

  if (WRITE_DOCS) {
    const doc = readFileSync(COST_DOC, "utf8");
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    if (start < 0 || end < start) throw new Error(`${COST_DOC} has no ${BEGIN} … ${END} block`);
    const block = `${BEGIN}\n<!-- written by \`npm run bench -- cost --write-docs\`; do not edit by hand -->\n\n${text}\n${END}`;
    writeFileSync(COST_DOC, doc.slice(0, start) + block + doc.slice(end + END.length));
    console.error(`cost: the tables written to ${COST_DOC}`);
  }

  const brief = (f: OpFigure) => ({
    requests: Object.fromEntries(
      Object.entries(f.usage.lines)
        .filter(([, u]) => u.requests >= 0.0005)
        .map(([line, u]) => [line, u.requests]),
    ),
    readUnits: unitsOf(f.usage).read,
    writeUnits: unitsOf(f.usage).write,
    cpuMs: f.cpuMs,
  });
  const round = (value: unknown) =>
    JSON.parse(JSON.stringify(value), (_key, v) =>
      typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(4)) : v,
    );
  const bill = (lines: CostLine[]) => ({
    total: sum(lines),
    largest: largest(lines).id,
    lines: Object.fromEntries(lines.map((line) => [line.id, line.dollars])),
  });
  console.log(
    `BENCH_COST ${JSON.stringify(
      round({
        prices: { asOf: PRICES_AS_OF, region: PRICES_REGION, ...p },
        assumptions: a,
        deployed: DEPLOYED,
        servers: CREATES,
        perOperation: {
          ...Object.fromEntries(PATH_NAMES.map((path) => [`warm.${path}`, brief(callOnly(m.warm[path]))])),
          cold: brief(callOnly(m.cold)),
          listenSessionOpened: brief(ownOnly(m.listenSessions)),
          check: brief(m.checks),
          probe: brief(m.probes),
          sweepPerRun: brief(m.sweepFit.fixed),
          sweepPerServer: brief(m.sweepFit.perServer),
          listPage: { ...brief(ownOnly(m.lists)), servers: m.listed },
          create: brief(m.creates),
          edit: brief(ownOnly(m.edits)),
          fullReadPerServer: brief(m.fullRead),
        },
        background: {
          feed: m.feed,
          callsHistoryWriteUnits: m.historyUnits.calls,
          idleCpuMsPerSecond: m.background.cpuMsPerSecond,
        },
        audit: { packOfOne: m.auditPack, devEventsPerPack: m.audit.events / Math.max(1, m.audit.items) },
        metrics: { perServer: m.metricsPerServer, perCalledTool: m.metricsPerTool },
        millionWarmCalls: Object.fromEntries(
          PATH_NAMES.map((path) => [
            path,
            { ...bill(million[path].lines), billedMs: million[path].billedMs },
          ]),
        ),
        sweptMonth: Object.fromEntries(fleets.map((servers) => [servers, bill(swept[servers]!)])),
        at1000PerSecond: capacity,
        fixedMonth: bill(fixed),
      }),
    )}`,
  );
}
