/**
 * One trace from the client to the stdio child: the gateway (this process, tracing as
 * `mcpgw-gateway`) and the stdio runner (its own process, `mcpgw-runner`) both export over OTLP/HTTP to
 * a receiver here, which decodes the exporter's JSON payloads. A call made with the client's own
 * `traceparent` yields spans of that trace whose parents chain client → request → call → upstream
 * client → runner request → child request, and the child (and an HTTP upstream) is handed that trace.
 * No argument, header secret or env value reaches a span; `always_off` exports nothing and the call works.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startTracing, type Tracing } from "@mcpgw/telemetry";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/lib/processes";
import { type SeenTrace, startTraceUpstream } from "../fixtures/trace-upstream";
import { removeBundle, testUidBase, traceUpstream } from "../runner/helpers";
import { createTestConfig } from "../support/aws";
import { devEnv } from "../support/dev-process";
import { startOtlpReceiver } from "../support/otlp-receiver";
import { createServer as createGatewayServer, reaches, uniqueName } from "../support/servers";
import { type Stack, startStack, waitFor } from "../support/stack";

const ROOT = resolve(import.meta.dirname, "../..");
const SENTINEL_ARG = `arg-sentinel-${randomUUID()}`;
const SENTINEL_HEADER = `header-sentinel-${randomUUID()}`;
const SENTINEL_ENV = `env-sentinel-${randomUUID()}`;
/** Spans of both processes are exported this often (the batch processor's delay). */
/** Spans exported soon, and every trace recorded (the default samples 5 % of the traces a process starts). */
const EXPORT_DELAY = { OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_TRACES_SAMPLER: "parentbased_always_on" };

/** A span as the OTLP/HTTP JSON encoding carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 5 consumer. */
  kind: number;
}
interface OtlpAttribute {
  key: string;
  value: { stringValue?: string };
}
interface OtlpTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}
interface Received extends OtlpSpan {
  service: string;
}

const KIND = { internal: 1, server: 2, client: 3 };

/** An OTLP/HTTP trace receiver on 127.0.0.1: every span it was sent, with its service, and the raw payloads. */
async function startReceiver() {
  const spans: Received[] = [];
  const receiver = await startOtlpReceiver<OtlpTraces>("/v1/traces", (payload) => {
    for (const resource of payload.resourceSpans ?? []) {
      const service =
        resource.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue ?? "";
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? []) spans.push({ ...span, service });
    }
  });
  return { ...receiver, spans };
}

/** A client's own W3C traceparent (sampled): a fresh trace id and span id. */
function clientParent(flags = "01") {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${flags}` };
}

/** The trace id, parent span id and flags of a traceparent. */
function parts(traceparent: string | undefined) {
  const [, traceId, spanId, flags] = (traceparent ?? "").split("-");
  return { traceId, spanId, flags };
}

describe("traces across gateway, runner and child", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let tracing: Tracing;
  let runner: ChildProcess;
  let tempBase: string;
  let stack: Stack;
  let upstream: Awaited<ReturnType<typeof startTraceUpstream>>;
  let key: string;
  const stdioName = uniqueName("traced-stdio");
  const httpName = uniqueName("traced-http");

  beforeAll(async () => {
    receiver = await startReceiver();
    tracing = startTracing({
      service: "gateway",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...EXPORT_DELAY },
    });
    const config = await createTestConfig();
    tempBase = mkdtempSync(join(tmpdir(), "mcpgw-traces-"));
    chmodSync(tempBase, 0o711);
    const port = await freePort();
    const token = `runner-${randomUUID()}`;
    runner = spawn(process.execPath, ["--import", "tsx", "packages/runner/src/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...(await devEnv(config)).env,
        PORT: String(port),
        HOST: "127.0.0.1",
        RUNNER_TOKEN: token,
        RUNNER_TEMP_DIR: tempBase,
        RUNNER_UID_BASE: String(testUidBase()),
        RUNNER_UID_COUNT: "200",
        LOG_LEVEL: "warn",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        ...EXPORT_DELAY,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let runnerLog = "";
    runner.stderr?.on("data", (chunk: Buffer) => {
      runnerLog += chunk.toString("utf8");
    });
    const runnerUrl = `http://127.0.0.1:${port}`;
    const answers = () =>
      fetch(`${runnerUrl}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
    await waitFor(answers, Boolean, { timeoutMs: 30_000 }).catch((error: Error) => {
      throw new Error(`${error.message}; the runner wrote:\n${runnerLog}`);
    });
    stack = await startStack({ aws: config, runnerAt: { url: runnerUrl, token } });
    upstream = await startTraceUpstream();
    const stdio = await createGatewayServer(stack, {
      name: stdioName,
      command: process.execPath,
      args: [await traceUpstream(), "--stdio"],
      env: { TRACE_TEST_TOKEN: SENTINEL_ENV },
    });
    const http = await createGatewayServer(stack, {
      name: httpName,
      url: upstream.url,
      headers: { "X-Api-Key": SENTINEL_HEADER },
    });
    await Promise.all([reaches(stack, stdio, "connected", 30_000), reaches(stack, http, "connected")]);
    key = (await stack.call("POST", "/v1/keys", { name: uniqueName("traced") })).body.key;
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
    runner?.kill("SIGTERM");
    await upstream?.close();
    await tracing?.shutdown();
    await receiver?.close();
    removeBundle();
    if (tempBase) rmSync(tempBase, { recursive: true, force: true });
  });

  /** A REST tool call with `traceparent`; its `trace` result. */
  async function restCall(tool: string, traceparent: string): Promise<{ status: number; seen: SeenTrace }> {
    const response = await fetch(`${stack.api.url}/v1/tools/${tool}/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", traceparent },
      body: JSON.stringify({ arguments: { secret: SENTINEL_ARG } }),
    });
    const body = (await response.json()) as { text?: string };
    return { status: response.status, seen: JSON.parse(body.text ?? "{}") };
  }

  /** The spans of `traceId` once `accept` holds for them (gateway spans flushed first). */
  async function spansOf(traceId: string, accept: (spans: Received[]) => boolean): Promise<Received[]> {
    await tracing.flush();
    return waitFor(async () => receiver.spans.filter((span) => span.traceId === traceId), accept, {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
  }

  it("a stdio call over /mcp/{server} with the client's traceparent is one trace, client → gateway → runner → child", async () => {
    const client = clientParent();
    const injected = clientParent();
    const mcp = new Client({ name: "traced-client", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.api.url}/mcp/${stdioName}`), {
        requestInit: { headers: { authorization: `Bearer ${key}`, traceparent: client.traceparent } },
      }),
    );
    // The client's `_meta.traceparent` names another trace: it must not become the gateway's context.
    const result = await mcp.callTool({
      name: "trace",
      arguments: { secret: SENTINEL_ARG },
      _meta: { traceparent: injected.traceparent },
    });
    await mcp.close();
    const seen = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}") as SeenTrace;

    expect(parts(seen.meta).traceId).toBe(client.traceId);
    const spans = await spansOf(client.traceId, (found) =>
      found.some((span) => span.service === "mcpgw-runner" && span.kind === KIND.client),
    );
    const one = (service: string, kind: number, name: string) => {
      const found = spans.filter((s) => s.service === service && s.kind === kind && s.name === name);
      expect(found, `${service} ${name} in ${JSON.stringify(spans)}`).toHaveLength(1);
      return found[0] as Received;
    };
    const child = one("mcpgw-runner", KIND.client, "tools/call");
    const runnerRequest = spans.find((s) => s.spanId === child.parentSpanId);
    const upstreamClient = one("mcpgw-gateway", KIND.client, "tools/call");
    const call = one("mcpgw-gateway", KIND.internal, `tools/call ${stdioName}__trace`);
    const request = spans.find((s) => s.spanId === call.parentSpanId);

    expect(parts(seen.meta).spanId).toBe(child.spanId);
    expect(runnerRequest).toMatchObject({
      service: "mcpgw-runner",
      kind: KIND.server,
      name: "POST /servers/{id}/callers/{caller}/mcp",
      parentSpanId: upstreamClient.spanId,
    });
    expect(upstreamClient.parentSpanId).toBe(call.spanId);
    expect(request).toMatchObject({
      service: "mcpgw-gateway",
      kind: KIND.server,
      name: "POST /mcp/{server}",
      parentSpanId: client.spanId,
    });
    expect(receiver.spans.filter((span) => span.traceId === injected.traceId)).toEqual([]);
    // The caller's session to the runner was opened by this call, but outside its trace (a warm session
    // outlives the call that opened it): the runner served one request of this trace, the call.
    expect(spans.filter((s) => s.service === "mcpgw-runner" && s.kind === KIND.server)).toHaveLength(1);
  });

  it("an HTTP upstream reads the gateway's upstream span in its traceparent header and in _meta", async () => {
    const client = clientParent();
    const { status, seen } = await restCall(`${httpName}__trace`, client.traceparent);

    expect(status).toBe(200);
    const spans = await spansOf(client.traceId, (found) =>
      found.some((span) => span.kind === KIND.client && span.service === "mcpgw-gateway"),
    );
    const upstreamClient = spans.find((s) => s.kind === KIND.client && s.name === "tools/call") as Received;
    const call = spans.find((s) => s.spanId === upstreamClient.parentSpanId);
    const request = spans.find((s) => s.spanId === call?.parentSpanId);
    expect(parts(seen.header)).toEqual({
      traceId: client.traceId,
      spanId: upstreamClient.spanId,
      flags: "01",
    });
    expect(seen.meta).toBe(seen.header);
    expect(call?.name).toBe(`tools/call ${httpName}__trace`);
    expect(request).toMatchObject({ name: "POST /v1/tools/{name}/call", parentSpanId: client.spanId });
  });

  it("a worker job is a trace of its own: the runner's requests for its probe are children of its span", async () => {
    await tracing.flush();
    const jobs = receiver.spans.filter(
      (span) => span.name === "job connect" && span.service === "mcpgw-gateway",
    );
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    for (const job of jobs) expect(job.parentSpanId ?? "").toBe("");
    const probed = await waitFor(
      async () =>
        receiver.spans.filter(
          (span) => span.service === "mcpgw-runner" && jobs.some((job) => job.spanId === span.parentSpanId),
        ),
      (found) => found.length > 0,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(probed[0]).toMatchObject({ kind: KIND.server, name: "POST /servers/{id}/mcp" });
  });

  it("no argument, header secret or env value is in any span exported", () => {
    const exported = receiver.payloads.join("\n");
    // The calls' spans are there (of both processes), with the names and ids they may carry…
    for (const tool of [stdioName, httpName]) expect(exported).toContain(`"tools/call ${tool}__trace"`);
    expect(exported).toContain('"mcpgw-runner"');
    // …and no value.
    for (const sentinel of [SENTINEL_ARG, SENTINEL_HEADER, SENTINEL_ENV, key])
      expect(exported).not.toContain(sentinel);
  });

  it("OTEL_TRACES_SAMPLER=always_off exports no span, and the call still succeeds in the client's trace", async () => {
    await tracing.shutdown();
    tracing = startTracing({
      service: "gateway",
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ...EXPORT_DELAY, OTEL_TRACES_SAMPLER: "always_off" },
    });
    const client = clientParent();
    const { status, seen } = await restCall(`${stdioName}__trace`, client.traceparent);

    expect(status).toBe(200);
    // Handed on unsampled: the runner (parent-based) records nothing either.
    expect(parts(seen.meta)).toMatchObject({ traceId: client.traceId, flags: "00" });
    await tracing.flush();
    await new Promise((done) => setTimeout(done, 1_000));
    expect(receiver.spans.filter((span) => span.traceId === client.traceId)).toEqual([]);
  });
});
