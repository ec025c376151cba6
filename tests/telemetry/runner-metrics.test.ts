/**
 * The runner as its own process (`packages/runner/src/main.ts`), its face on loopback and no OTLP
 * endpoint: `GET /metrics` answers Prometheus text without the runner's token (scrapers send none),
 * with `mcpgw_runner_children` by state; every other route still wants the token.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testUidBase } from "../runner/helpers";
import { createTestConfig } from "../support/aws";
import { devEnv } from "../support/dev-process";
import { waitFor } from "../support/stack";

const ROOT = resolve(import.meta.dirname, "../..");

describe("the runner process's GET /metrics", () => {
  let child: ChildProcess;
  let url: string;
  let stderr = "";

  beforeAll(async () => {
    const { env } = await devEnv(await createTestConfig());
    url = `http://127.0.0.1:${env.PORT}`;
    child = spawn(process.execPath, ["--import", "tsx", resolve(ROOT, "packages/runner/src/main.ts")], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env,
        HOST: "127.0.0.1",
        RUNNER_TOKEN: `runner-${randomUUID()}`,
        RUNNER_UID_BASE: String(testUidBase()),
        RUNNER_UID_COUNT: "200",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    await waitFor(
      async () => stderr,
      (text) => text.includes("runner listening"),
      { timeoutMs: 30_000 },
    );
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("serves Prometheus text with the children by state, without a token; other routes still want one", async () => {
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(await response.text());
    const children = families.find((family) => family.name === "mcpgw_runner_children");
    expect(children?.type).toBe("GAUGE");
    expect(children?.metrics.map((metric) => metric.labels?.state).sort()).toEqual([
      "busy",
      "draining",
      "idle",
      "starting",
    ]);
    expect((await fetch(`${url}/servers`)).status).toBe(401);
  });
});
