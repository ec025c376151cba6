/**
 * `npm run dev` serves its metrics at `GET /metrics` in Prometheus text: a real parser reads it, the
 * call counter `mcpgw_tool_calls_total{server,tool,outcome}` equals the calls made (results, tool
 * errors, upstream errors; an HTTP and a stdio server), the duration histograms are there, the warm-session, runner-children and probe series are there — and a secret planted in arguments,
 * in an HTTP header and in a stdio child's env appears nowhere in the text.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../fixtures/mcp-upstream";
import { TINY_STDIO, testUidBase } from "../runner/helpers";
import { type DevProcess, startDevProcess } from "../support/dev-process";
import { uniqueName } from "../support/servers";
import { waitFor } from "../support/stack";

const ARG_SECRET = `arg-sentinel-${randomUUID()}`;
const HEADER_SECRET = `header-sentinel-${randomUUID()}`;
const ENV_SECRET = `env-sentinel-${randomUUID()}`;

describe("GET /metrics on npm run dev (Prometheus text)", () => {
  let dev: DevProcess;
  let upstream: Upstream;

  beforeAll(async () => {
    [dev, upstream] = await Promise.all([
      // A sweep every 2 s: the queue depth it reads is reported.
      startDevProcess({
        RUNNER_UID_BASE: String(testUidBase()),
        RUNNER_UID_COUNT: "200",
        SWEEP_INTERVAL_SECONDS: "2",
      }),
      startUpstream({ requireBearer: HEADER_SECRET, jsonResponse: true }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await dev?.stop();
    await upstream?.close();
  });

  async function connected(body: Record<string, unknown>): Promise<void> {
    const created = await dev.call("POST", "/v1/servers", body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await waitFor(
      async () => (await dev.call("GET", `/v1/servers/${created.body.id}`)).body.status,
      (status) => status.state === "connected",
      { timeoutMs: 20_000 },
    );
  }

  async function scrape(): Promise<{ text: string; families: Map<string, PrometheusFamily> }> {
    const response = await fetch(`${dev.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const families = parsePrometheusTextFormat(text);
    return { text, families: new Map(families.map((family) => [family.name, family])) };
  }

  it("counts every call by server, tool and outcome; no secret appears", async () => {
    const http = uniqueName("metrics-http");
    const stdio = uniqueName("metrics-stdio");
    await Promise.all([
      connected({ name: http, url: upstream.url, headers: { Authorization: `Bearer ${HEADER_SECRET}` } }),
      connected({ name: stdio, command: process.execPath, args: [TINY_STDIO], env: { API_KEY: ENV_SECRET } }),
    ]);
    const call = async (tool: string, args: Record<string, unknown>, status: number) => {
      const response = await dev.call("POST", `/v1/tools/${tool}/call`, { arguments: args });
      expect(response.status, JSON.stringify(response.body)).toBe(status);
    };
    for (let i = 0; i < 3; i++) await call(`${http}__echo`, { text: ARG_SECRET }, 200);
    for (let i = 0; i < 2; i++) await call(`${http}__fail`, { note: ARG_SECRET }, 200);
    await call(`${http}__add`, { a: ARG_SECRET, b: 1 }, 502);
    for (let i = 0; i < 2; i++) await call(`${stdio}__ping`, { note: ARG_SECRET }, 200);

    const { text, families } = await scrape();
    const calls = families.get("mcpgw_tool_calls_total");
    expect(calls?.type).toBe("COUNTER");
    const counted = Object.fromEntries(
      (calls?.metrics ?? []).map(({ labels, value }) => [
        `${labels?.server}/${labels?.tool}/${labels?.outcome}`,
        Number(value),
      ]),
    );
    expect(counted).toEqual({
      [`${http}/echo/ok`]: 3,
      [`${http}/fail/tool_error`]: 2,
      [`${http}/add/rpc`]: 1,
      [`${stdio}/ping/ok`]: 2,
    });
    // The duration histograms are there (the parser keeps no labels of a histogram's series, so their
    // counts per call are checked on the OTLP payload, tests/telemetry/otlp-metrics.test.ts).
    for (const name of [
      "mcpgw_tool_call_duration",
      "mcpgw_tool_call_upstream_duration",
      "mcpgw_tool_call_gateway_duration",
    ]) {
      expect(families.get(name)?.type, name).toBe("HISTOGRAM");
      expect(families.get(name)?.metrics[0]?.buckets?.["+Inf"], name).toBeDefined();
    }
    // The warm sessions (one per server), the runner's child, and the worker's probes are reported too.
    expect(Number(families.get("mcpgw_warm_sessions")?.metrics[0]?.value)).toBe(2);
    const children = families.get("mcpgw_runner_children")?.metrics ?? [];
    expect(children.reduce((sum, metric) => sum + Number(metric.value), 0)).toBe(1);
    // Their sum, what the runner service scales on.
    expect(Number(families.get("mcpgw_runner_task_children")?.metrics[0]?.value)).toBe(1);
    const probes = families.get("mcpgw_probe_total")?.metrics ?? [];
    expect(probes.map((metric) => metric.labels)).toEqual(
      expect.arrayContaining([
        { server: http, result: "ok" },
        { server: stdio, result: "ok" },
      ]),
    );

    // The worker's jobs (their connects) waited some time in the queue; the sweep read its depth.
    expect(families.get("mcpgw_job_age")?.type).toBe("HISTOGRAM");
    const depth = await waitFor(
      async () => (await scrape()).families.get("mcpgw_queue_depth")?.metrics[0]?.value,
      (value) => value !== undefined,
      { timeoutMs: 10_000 },
    );
    expect(Number(depth)).toBeGreaterThanOrEqual(0);

    for (const secret of [ARG_SECRET, HEADER_SECRET, ENV_SECRET]) expect(text).not.toContain(secret);
  }, 90_000);

  it("is not read through DNS rebinding: a Host or Origin that is not loopback is refused", async () => {
    const { port } = new URL(dev.url);
    const get = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path: "/metrics", headers }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        })
          .on("error", reject)
          .end();
      });
    expect(await get({ host: `127.0.0.1:${port}` })).toBe(200);
    expect(await get({ host: `rebound.example:${port}` })).toBe(403);
    expect(await get({ host: `127.0.0.1:${port}`, origin: "http://rebound.example" })).toBe(403);
  });
});
