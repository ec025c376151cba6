/**
 * The gateway on Lambda: what its handler (packages/api/src/lambda/gateway.ts — hono's `streamHandle`
 * and the end-of-invocation flushes of stream.ts) adds to a call, warm and cold, against the app it
 * wraps called directly (`app.fetch(new Request(…))`, with the env hono passes) in the same process
 * and run. No HTTP server runs in a Lambda, so there is no Node adapter: the runtime hands the handler
 * an event (Function URL, payload 2.0) and a response stream. What the handler adds is the event →
 * Request conversion, the Response → response stream (the prelude, then the body) and, after the last
 * byte and before the invocation returns, the flushes: the call's audit event written, the EMF metrics
 * line, the logs.
 *
 * The server registers through an in-process stack (its worker connects it) on this run's emulator; the
 * handler runs in child processes with a Lambda's environment (that stack's table, queue and keys,
 * AWS_LAMBDA_FUNCTION_NAME, the deployed NODE_OPTIONS) and Lambda's runtime stood in by
 * tests/deploy/support/lambda-runtime.mjs. Calls: `POST /v1/tools/bench__echo/call` and a 2026-07-28
 * stateless `tools/call` (the `_meta` envelope) on `/mcp/bench`; hono's `streamHandle` around a
 * one-route app, to see the adapter alone; the upstream called directly by the SDK client, for reference.
 *
 * - Warm: one process imports the gateway entry bundled as deployed, in one file that also exports
 *   what it is made of (`createGatewayApp`, `depsFromEnvironment`, `streamingHandler`), makes an app and
 *   the handler around it as gateway.ts does (the entry's own, made at import, stay idle), and calls
 *   that one app through the handler and through `app.fetch`. The baseline's audit event is written after each call too, timed apart (`app.fetch +
 *   audit flush`). Series interleaved round by round, each handler batch next to its baseline's,
 *   sequential (an instance takes one invocation at a time).
 * - Cold: fresh processes (plain node, as Lambda starts one), three kinds in turn: the deployable bundle
 *   (`bundleOne`: what deploys) imported, then invoked through its handler (REST first, then /mcp); and
 *   the exporting bundle, its app and handler made as in the warm process, its first calls through the
 *   handler or through `app.fetch` (the cold added time: one app against itself). Medians of BENCH_COLD
 *   of each.
 *
 *   BENCH_ROUNDS    rounds (default 10): one batch per series each
 *   BENCH_CALLS     timed calls per batch (default 100)
 *   BENCH_WARMUP_S  seconds of untimed calls on every series first (default 10)
 *   BENCH_COLD      fresh processes of each cold kind (default 5)
 *
 * Last line: `BENCH_LAMBDA {json}`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { runInThisContext } from "node:vm";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { build } from "esbuild";
import { Hono } from "hono";
import { streamHandle } from "hono/aws-lambda";
import * as lambdaRuntime from "../../tests/deploy/support/lambda-runtime.mjs";
import { urlEvent } from "../../tests/deploy/support/url-event";
import { bundleOne } from "../build";
import plugins from "../esbuild-plugins.mjs";
import { printTable, stopper } from "../lib/bench";
import { startEmulator } from "../lib/emulator";
import { NODE_FLAGS } from "../lib/node22";
import { percentile, ROOT, startTsProcess } from "../lib/processes";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const WARMUP_MS = 1000 * Number(process.env.BENCH_WARMUP_S ?? 10);
const COLD = Number(process.env.BENCH_COLD ?? 5);
const WARM_FLAG = "--warm-child";
const TOKEN = "bench-admin-token";
const SERVER = "bench";
const ARGUMENTS = { text: "hello" };
const MODERN = "2026-07-28";
const RUNTIME_MODULE = join(ROOT, "tests/deploy/support/lambda-runtime.mjs");

/**
 * How a call is timed, the same in the warm child and in the cold ones (plain JavaScript: those run
 * under plain node). Given lambda-runtime.mjs, it installs the runtime and answers `invoke` — through a
 * handler as the runtime does, timing the prelude (`HttpResponseStream.from`), the last body write and
 * the return — and `fetch`, the baseline: `app.fetch(new Request(…))` with the env hono passes, timing
 * the Response (its headers), its body read whole, then `flush()`.
 */
const TIMED_CALLS = `(runtime) => {
  runtime.installLambdaRuntime();
  const { HttpResponseStream } = globalThis.awslambda;
  const from = HttpResponseStream.from;
  let preludeAt = 0;
  HttpResponseStream.from = (stream, prelude) => {
    preludeAt = performance.now();
    return from(stream, prelude);
  };
  const context = (event) => ({
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    awsRequestId: event.requestContext.requestId,
    getRemainingTimeInMillis: () => 900_000,
    callbackWaitsForEmptyEventLoop: true,
  });
  return {
    async invoke(handler, event) {
      let lastAt = 0;
      const invocation = context(event);
      const onBody = () => {
        lastAt = performance.now();
      };
      const started = performance.now();
      const { statusCode, body } = await runtime.invokeStreaming(handler, event, invocation, { onBody });
      const returnedAt = performance.now();
      return { preludeMs: preludeAt - started, endMs: lastAt - started, returnMs: returnedAt - started, status: statusCode, body };
    },
    async fetch(app, event, flush) {
      const { requestContext } = event;
      const env = { event, requestContext, context: context(event) };
      const url = "https://" + requestContext.domainName + event.rawPath;
      const init = { method: requestContext.http.method, headers: event.headers, body: event.body };
      const started = performance.now();
      const response = await app.fetch(new Request(url, init), env);
      const headersAt = performance.now();
      const body = await response.text();
      const endAt = performance.now();
      await flush();
      return { preludeMs: headersAt - started, endMs: endAt - started, returnMs: performance.now() - started, status: response.status, body };
    },
  };
}`;

/**
 * A cold child: imports a bundle, then makes its first calls through its handler; or, when the bundle
 * exports what makes them, through a handler and app made as gateway.ts makes them, or that app's fetch.
 */
const COLD_SCRIPT = `import * as runtime from ${JSON.stringify(pathToFileURL(RUNTIME_MODULE).href)};
const timed = (${TIMED_CALLS})(runtime);
const [bundle, via, events] = process.argv.slice(1);
const started = performance.now();
const lambda = await import(bundle);
const importMs = performance.now() - started;
let call = (event) => timed.invoke(lambda.handler, event);
if (lambda.createGatewayApp) {
  const deps = lambda.depsFromEnvironment();
  const app = lambda.createGatewayApp(deps);
  const flush = async () => deps.audit?.flushWithin(lambda.AUDIT_INVOCATION_FLUSH_MS);
  const handler = lambda.streamingHandler(app, flush);
  call = via === "app" ? (event) => timed.fetch(app, event, flush) : (event) => timed.invoke(handler, event);
}
const calls = [];
for (const event of JSON.parse(events)) calls.push(await call(event));
process.stdout.write("\\nLAMBDA_COLD " + JSON.stringify({ importMs, calls }) + "\\n");
process.exit(0);`;

type UrlEvent = ReturnType<typeof urlEvent>;
/** One call's times (ms from its start): the prelude (app.fetch: the headers), the last byte, the return. */
interface Invocation {
  preludeMs: number;
  endMs: number;
  returnMs: number;
  status: number;
  body: string;
}
interface App {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
}
interface TimedCalls {
  invoke(handler: unknown, event: UrlEvent): Promise<Invocation>;
  fetch(app: App, event: UrlEvent, flush: () => Promise<void>): Promise<Invocation>;
}
/** What the exporting bundle exports besides the entry's handler: what gateway.ts makes it of. */
interface ExportingBundle {
  createGatewayApp(deps: unknown): App;
  depsFromEnvironment(): { audit?: { flushWithin(ms: number): Promise<void> } | undefined };
  streamingHandler(app: App, beforeReturn: () => Promise<void>): unknown;
  AUDIT_INVOCATION_FLUSH_MS: number;
}

/** The gateway's calls, and (warm only) `bare`: hono's streamHandle around a one-route app. */
const PATHS = ["rest", "mcp"] as const;
const WARM_PATHS = [...PATHS, "bare"] as const;
type PathName = (typeof WARM_PATHS)[number];
const LABEL: Record<PathName, string> = { rest: "REST", mcp: "/mcp", bare: "one-route app" };
type Via = "handler" | "app";
type SeriesName = `${PathName} ${Via}` | "direct";
/** A call's [prelude, last byte, return] (ms). */
type Sample = [number, number, number];
/** The fresh processes: the deployable bundle through its handler; the exporting one through either. */
type ColdKind = "deployed" | Via;
interface ColdStart {
  importMs: number;
  calls: Invocation[];
}

/** The Function URL event of `path`'s call (a bare call is the REST one, to the one-route app). */
function eventOf(path: PathName): UrlEvent {
  if (path !== "mcp")
    return urlEvent("POST", `/v1/tools/${SERVER}__echo/call`, {
      token: TOKEN,
      body: { arguments: ARGUMENTS },
    });
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const event = urlEvent("POST", `/mcp/${SERVER}`, {
    token: TOKEN,
    accept: "application/json, text/event-stream",
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: ARGUMENTS, _meta },
    },
  });
  Object.assign(event.headers, {
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "echo",
  });
  return event;
}

/** Throws unless `call` answered 200 with the echoed text and no tool error. */
function check(what: string, call: Invocation): void {
  if (call.status !== 200 || !call.body.includes('"hello"') || call.body.includes('"isError":true'))
    throw new Error(`${what} → ${call.status} ${call.body.slice(0, 500)}`);
}

if (process.argv[2] === WARM_FLAG) await warmChild(process.argv[3]!, process.argv[4]!);
else await bench();

async function bench(): Promise<void> {
  const { stops, stopAll } = stopper();
  const work = mkdtempSync(join(tmpdir(), "mcpgw-bench-lambda-"));
  stops.push(async () => rmSync(work, { recursive: true, force: true }));
  try {
    const emulator = await startEmulator((line) => console.error(line));
    stops.push(() => emulator.stop());
    const upstream = await startTsProcess(
      "tests/fixtures/mcp-upstream-cli.ts",
      ["--name", SERVER],
      /^listening (\S+)$/,
    );
    stops.push(() => upstream.stop());
    const upstreamUrl = upstream.match[1]!;
    // The stack that registers the server (its worker connects it), loaded here alone: the warm child
    // runs this module too, and must hold no second copy of the packages beside its bundle.
    const { startStack, waitFor } = await import("../../tests/support/stack");
    const { emulatorEnv } = await import("../../tests/support/aws");
    const stack = await startStack();
    stops.push(() => stack.stop());
    const created = await stack.call("POST", "/v1/servers", { name: SERVER, url: upstreamUrl });
    await waitFor(
      async () => (await stack.store.statuses.get(created.body.id))?.state,
      (state) => state === "connected",
      { timeoutMs: 30_000 },
    );
    const { config } = stack.store;
    // A Lambda's environment: its links as the local variables name them, and the deployed flags.
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      NODE_OPTIONS: NODE_FLAGS,
      ...emulatorEnv(),
      AWS_ENDPOINT_URL: emulator.endpoint,
      TABLE_NAME: config.tableName,
      QUEUE_NAME: config.queueName,
      DEAD_LETTER_QUEUE_NAME: config.deadLetterQueueName,
      KMS_KEY_ALIAS: config.keyAlias,
      SIGNING_KEY_ALIAS: config.signingKeyAlias,
      ADMIN_TOKEN: TOKEN,
      // The upstream listens on loopback (deployed: false).
      ALLOW_PRIVATE_UPSTREAMS: "true",
      // On Lambda: metrics as EMF lines written at the end of every invocation.
      AWS_LAMBDA_FUNCTION_NAME: "mcpgw-bench-gateway",
    };
    const [deployable, exporting] = await Promise.all([bundleOne("gateway", work), bundleWithApp(work)]);

    const cold: Record<ColdKind, ColdStart[]> = { deployed: [], handler: [], app: [] };
    for (let i = 0; i < COLD; i++) {
      cold.deployed.push(await coldStart(deployable.file, "handler", env));
      cold.handler.push(await coldStart(exporting, "handler", env));
      cold.app.push(await coldStart(exporting, "app", env));
    }
    const warm = await startTsProcess(
      "scripts/bench/lambda.ts",
      [WARM_FLAG, exporting, upstreamUrl],
      /^LAMBDA_WARM (.*)$/,
      env,
      300_000,
    );
    stops.push(() => warm.stop());
    const result = JSON.parse(warm.match[1]!) as
      | { samples: Record<SeriesName, Sample[]> }
      | { error: string };
    if ("error" in result) throw new Error(`the warm child failed: ${result.error}`);
    report(result.samples, cold);
  } finally {
    await stopAll();
  }
}

/**
 * The gateway entry bundled as `bundleOne` does (minified ESM for Node 22, the same plugins), in one
 * file that also exports what it is made of: a handler and its app made from them run the deployed code.
 */
async function bundleWithApp(work: string): Promise<string> {
  const outfile = join(work, "gateway-with-app.mjs");
  await build({
    stdin: {
      contents: [
        'export * from "./packages/api/src/lambda/gateway.ts";',
        'export { createGatewayApp } from "./packages/api/src/gateway-app.ts";',
        'export { depsFromEnvironment } from "./packages/api/src/lambda/from-env.ts";',
        'export { streamingHandler } from "./packages/api/src/lambda/stream.ts";',
        'export { AUDIT_INVOCATION_FLUSH_MS } from "./packages/api/src/audit-writer.ts";',
      ].join("\n"),
      resolveDir: ROOT,
      sourcefile: "gateway-with-app.ts",
      loader: "ts",
    },
    outfile,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "node",
    target: "node22",
    plugins,
    banner: { js: "import{createRequire as __r}from'node:module';const require=__r(import.meta.url);" },
    logLevel: "warning",
  });
  return outfile;
}

/** One fresh process (plain node, a Lambda's env): its import time and its first REST then /mcp calls. */
async function coldStart(bundle: string, via: Via, env: Record<string, string>): Promise<ColdStart> {
  const events = JSON.stringify(PATHS.map(eventOf));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--input-type=module", "-e", COLD_SCRIPT, pathToFileURL(bundle).href, via, events],
    { env, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
  );
  const line = stdout.split("\n").find((text) => text.startsWith("LAMBDA_COLD "));
  if (!line) throw new Error(`a cold ${via} child printed no result`);
  const result = JSON.parse(line.slice("LAMBDA_COLD ".length)) as ColdStart;
  result.calls.forEach((call, i) => {
    check(`cold ${via} ${PATHS[i]}`, call);
  });
  return result;
}

/** The warm child: every series interleaved round by round; prints `LAMBDA_WARM {samples}` and exits. */
async function warmChild(bundle: string, upstreamUrl: string): Promise<void> {
  try {
    const timed = (runInThisContext(TIMED_CALLS) as (runtime: typeof lambdaRuntime) => TimedCalls)(
      lambdaRuntime,
    );
    const lambda = (await import(pathToFileURL(bundle).href)) as ExportingBundle;
    const deps = lambda.depsFromEnvironment();
    const app = lambda.createGatewayApp(deps);
    // As gateway.ts makes its handler: the app, and its audit events written before each invocation ends.
    const flush = async () => deps.audit?.flushWithin(lambda.AUDIT_INVOCATION_FLUSH_MS);
    const handler = lambda.streamingHandler(app, flush);
    const bare = new Hono().post("*", (c) => c.json({ content: [{ type: "text", text: "hello" }] }));
    const bareHandler = streamHandle(bare);
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl)));
    const series =
      (path: PathName, call: (event: UrlEvent) => Promise<Invocation>) => async (): Promise<Sample> => {
        const result = await call(eventOf(path));
        check(path, result);
        return [result.preludeMs, result.endMs, result.returnMs];
      };
    const calls: Record<SeriesName, () => Promise<Sample>> = {
      "rest handler": series("rest", (event) => timed.invoke(handler, event)),
      "rest app": series("rest", (event) => timed.fetch(app, event, flush)),
      "mcp handler": series("mcp", (event) => timed.invoke(handler, event)),
      "mcp app": series("mcp", (event) => timed.fetch(app, event, flush)),
      "bare handler": series("bare", (event) => timed.invoke(bareHandler, event)),
      "bare app": series("bare", (event) => timed.fetch(bare, event, async () => {})),
      direct: async () => {
        const started = performance.now();
        const result = await client.callTool({ name: "echo", arguments: ARGUMENTS });
        const ms = performance.now() - started;
        if (result.isError) throw new Error(`direct echo failed: ${JSON.stringify(result.content)}`);
        return [ms, ms, ms];
      },
    };
    const names = Object.keys(calls) as SeriesName[];
    const batch = async (name: SeriesName, count: number) => {
      const samples: Sample[] = [];
      for (let i = 0; i < count; i++) samples.push(await calls[name]());
      return samples;
    };
    for (const warming = Date.now(); Date.now() - warming < WARMUP_MS; )
      for (const name of names) await batch(name, 20);
    const samples = Object.fromEntries(names.map((name) => [name, [] as Sample[]])) as Record<
      SeriesName,
      Sample[]
    >;
    // Each handler batch next to its baseline's (which first alternating), the groups rotating by one.
    const groups: SeriesName[][] = [
      ...WARM_PATHS.map((path): SeriesName[] => [`${path} handler`, `${path} app`]),
      ["direct"],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      const order = groups.map((_, i) => groups[(i + round) % groups.length]!);
      for (const group of order)
        for (const name of round % 2 === 0 ? group : [...group].reverse()) {
          await batch(name, 3); // untimed: the series' connections back in use
          samples[name].push(...(await batch(name, CALLS)));
        }
    }
    await client.close();
    const rounded = JSON.stringify({ samples }, (_key, value) =>
      typeof value === "number" ? Math.round(value * 1000) / 1000 : value,
    );
    process.stdout.write(`\nLAMBDA_WARM ${rounded}\n`);
  } catch (error) {
    process.stdout.write(`\nLAMBDA_WARM ${JSON.stringify({ error: String(error) })}\n`);
  }
  process.exit(0);
}

/** p50 and p99 (ms). */
interface Spread {
  p50Ms: number;
  p99Ms: number;
}
interface WarmFigures {
  app: Spread;
  appWithAuditFlush: Spread;
  handlerToLastByte: Spread;
  handlerToReturn: Spread;
  /** The handler's last byte over app.fetch's body read whole. */
  addedP50Ms: number;
  addedP99Ms: number;
  /** The handler's return over app.fetch's body read whole. */
  invocationAddedP50Ms: number;
  invocationAddedP99Ms: number;
  /** p50s: before the prelude and for the body (handler − app.fetch); after the last byte; audit flush alone. */
  parts: { beforePreludeMs: number; bodyMs: number; afterLastByteMs: number; auditFlushAloneMs: number };
}
interface ColdFigures {
  handlerToLastByteMs: number;
  handlerToReturnMs: number;
  appMs: number;
  appWithAuditFlushMs: number;
  addedMs: number;
  invocationAddedMs: number;
}

/** The tables, the sentences of what the handler's time is made of, and the `BENCH_LAMBDA` line. */
function report(samples: Record<SeriesName, Sample[]>, cold: Record<ColdKind, ColdStart[]>): void {
  const ms = (value: number) => value.toFixed(3);
  const plus = (value: number) => `${value >= 0 ? "+" : ""}${ms(value)}`;
  const p = (name: SeriesName, part: (sample: Sample) => number, q: number) =>
    percentile(samples[name].map(part), q);
  const spread = (name: SeriesName, part: (sample: Sample) => number): Spread => ({
    p50Ms: p(name, part, 50),
    p99Ms: p(name, part, 99),
  });
  const prelude = (s: Sample) => s[0];
  const lastByte = (s: Sample) => s[1];
  const ret = (s: Sample) => s[2];
  const warm = {} as Record<PathName, WarmFigures>;
  for (const path of WARM_PATHS) {
    const handler = `${path} handler` as const;
    const app = `${path} app` as const;
    warm[path] = {
      app: spread(app, lastByte),
      appWithAuditFlush: spread(app, ret),
      handlerToLastByte: spread(handler, lastByte),
      handlerToReturn: spread(handler, ret),
      addedP50Ms: p(handler, lastByte, 50) - p(app, lastByte, 50),
      addedP99Ms: p(handler, lastByte, 99) - p(app, lastByte, 99),
      invocationAddedP50Ms: p(handler, ret, 50) - p(app, lastByte, 50),
      invocationAddedP99Ms: p(handler, ret, 99) - p(app, lastByte, 99),
      parts: {
        beforePreludeMs: p(handler, prelude, 50) - p(app, prelude, 50),
        bodyMs: p(handler, (s) => s[1] - s[0], 50) - p(app, (s) => s[1] - s[0], 50),
        afterLastByteMs: p(handler, (s) => s[2] - s[1], 50),
        auditFlushAloneMs: p(app, (s) => s[2] - s[1], 50),
      },
    };
  }
  const direct = spread("direct", lastByte);

  console.log(
    `lambda: the gateway's handler (Lambda's runtime stood in by tests/deploy/support/lambda-runtime.mjs) vs app.fetch of the app it wraps, in one process; ${ROUNDS} rounds × ${CALLS} sequential calls per series, interleaved; one upstream; DynamoDB/SQS/KMS on the emulator`,
  );
  console.log("");
  printTable([
    ["warm (ms)", "p50", "p99", "added p50", "added p99"],
    ...WARM_PATHS.flatMap((path) => {
      const w = warm[path];
      const label = LABEL[path];
      return [
        [`${label}  app.fetch`, ms(w.app.p50Ms), ms(w.app.p99Ms), "—", "—"],
        ...(path === "bare"
          ? []
          : [
              [
                `${label}  app.fetch + audit flush`,
                ms(w.appWithAuditFlush.p50Ms),
                ms(w.appWithAuditFlush.p99Ms),
                plus(w.appWithAuditFlush.p50Ms - w.app.p50Ms),
                plus(w.appWithAuditFlush.p99Ms - w.app.p99Ms),
              ],
            ]),
        [
          `${label}  handler → last byte`,
          ms(w.handlerToLastByte.p50Ms),
          ms(w.handlerToLastByte.p99Ms),
          plus(w.addedP50Ms),
          plus(w.addedP99Ms),
        ],
        [
          `${label}  handler → return`,
          ms(w.handlerToReturn.p50Ms),
          ms(w.handlerToReturn.p99Ms),
          plus(w.invocationAddedP50Ms),
          plus(w.invocationAddedP99Ms),
        ],
      ];
    }),
    ["upstream direct (SDK client)", ms(direct.p50Ms), ms(direct.p99Ms), "", ""],
  ]);
  console.log(
    "  (added: over app.fetch with its body read whole; last byte: the body's last write into the response stream, what the caller waits for; return: the invocation's end, billed, the instance held; one-route app: hono's streamHandle alone)",
  );

  const median = (values: number[]) => percentile(values, 50);
  const coldCall = (kind: ColdKind, i: number, part: "endMs" | "returnMs") =>
    median(cold[kind].map((child) => child.calls[i]![part]));
  const importMs = (kind: ColdKind) => median(cold[kind].map((child) => child.importMs));
  const deployed = {
    importMs: importMs("deployed"),
    firstAnswerMs: median(cold.deployed.map((child) => child.importMs + child.calls[0]!.endMs)),
    ...Object.fromEntries(
      PATHS.map((path, i) => [
        path,
        { lastByteMs: coldCall("deployed", i, "endMs"), returnMs: coldCall("deployed", i, "returnMs") },
      ]),
    ),
  } as { importMs: number; firstAnswerMs: number } & Record<
    (typeof PATHS)[number],
    { lastByteMs: number; returnMs: number }
  >;
  const coldFigures = Object.fromEntries(
    PATHS.map((path, i): [string, ColdFigures] => [
      path,
      {
        handlerToLastByteMs: coldCall("handler", i, "endMs"),
        handlerToReturnMs: coldCall("handler", i, "returnMs"),
        appMs: coldCall("app", i, "endMs"),
        appWithAuditFlushMs: coldCall("app", i, "returnMs"),
        addedMs: coldCall("handler", i, "endMs") - coldCall("app", i, "endMs"),
        invocationAddedMs: coldCall("handler", i, "returnMs") - coldCall("app", i, "endMs"),
      },
    ]),
  ) as Record<(typeof PATHS)[number], ColdFigures>;
  const blank = ["", ""];
  console.log("");
  printTable([
    [
      `cold (ms, median of ${COLD} fresh processes each)`,
      "deployed",
      "",
      "handler",
      "",
      "app.fetch",
      "",
      "added",
      "",
    ],
    ["", "last byte", "return", "last byte", "return", "answer", "+ audit", "last byte", "return"],
    [
      "import (init: the bundle's top level)",
      ms(deployed.importMs),
      "",
      ms(importMs("handler")),
      "",
      ms(importMs("app")),
      ...blank,
      ...blank,
    ],
    ...PATHS.map((path, i) => {
      const c = coldFigures[path];
      return [
        i === 0 ? "first call, REST" : "then the first /mcp call",
        ms(deployed[path].lastByteMs),
        ms(deployed[path].returnMs),
        ms(c.handlerToLastByteMs),
        ms(c.handlerToReturnMs),
        ms(c.appMs),
        ms(c.appWithAuditFlushMs),
        plus(c.addedMs),
        plus(c.invocationAddedMs),
      ];
    }),
    ["import + first answer", ms(deployed.firstAnswerMs), "", ...blank, ...blank, ...blank],
  ]);
  console.log(
    "  (deployed: the deployable bundle (bundleOne) through its handler; handler and app.fetch: the bundle that also exports its makers, one app made by them called either way; added: over app.fetch's answer)",
  );

  console.log("");
  for (const path of PATHS) {
    const w = warm[path];
    const telemetry = w.parts.afterLastByteMs - w.parts.auditFlushAloneMs;
    console.log(
      `${LABEL[path]}: the handler adds ${plus(w.addedP50Ms)} ms p50 to the answer — ${plus(w.parts.beforePreludeMs)} ms before the prelude (event → Request, the Response's headers → prelude), ${plus(w.parts.bodyMs)} ms for the body (Response → response stream) — then holds the invocation ${ms(w.parts.afterLastByteMs)} ms past the last byte: the audit event written (${ms(w.parts.auditFlushAloneMs)} ms alone: a BatchWriteItem to the emulator), the EMF metrics line and the logs (the other ${ms(telemetry)} ms).`,
    );
  }
  const { bare } = warm;
  console.log(
    `hono's streamHandle alone, around a one-route app: ${plus(bare.addedP50Ms)} ms p50 (${plus(bare.parts.beforePreludeMs)} before the prelude, ${plus(bare.parts.bodyMs)} for the body).`,
  );
  console.log(
    "No HTTP server runs in a Lambda, so the Node adapter's cost (the proxy bench's hop) is not there: Lambda's frontend and the runtime parse the request into the event and carry the stream's bytes back, AWS's hop, not measured here. What the handler adds to the answer is the event → Request and Response → stream conversions; to the invocation (billed, the instance held), the end-of-invocation flush, the audit write first — which a server batches in the background instead.",
  );
  console.log(
    `BENCH_LAMBDA ${JSON.stringify(
      {
        rounds: ROUNDS,
        callsPerRound: CALLS,
        warm,
        direct,
        cold: { processes: COLD, deployed, ...coldFigures },
      },
      (_key, value) => (typeof value === "number" ? Math.round(value * 1000) / 1000 : value),
    )}`,
  );
}
