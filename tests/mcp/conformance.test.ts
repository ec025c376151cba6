/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode, every server
 * scenario, on Node 22) run three times:
 *
 *  - straight against the conformance upstream (tests/fixtures/conformance-upstream.ts) — the
 *    baseline that shows the upstream offers what every scenario expects;
 *  - against `/mcp/{server}` fronting that upstream;
 *  - against the aggregated `/mcp`.
 *
 * The suite's client cannot send an Authorization header, so each gateway run goes through a tiny
 * 127.0.0.1 proxy that adds the client key and forwards everything else (Host and Origin included,
 * so the DNS-rebinding scenario still reaches the gateway's own checks; the stack listens
 * loopback-only). Each run's passed/failed counts are printed; every failing scenario must be listed
 * with its reason in conformance-expected-failures.json, and every listed one must still fail (the
 * file stays honest). A scenario fails as the suite's own `--expected-failures` baseline counts it:
 * any FAILURE or WARNING check.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { ensureNode22 } from "../../scripts/lib/node22";
import { type ConformanceUpstream, startConformanceUpstream } from "../fixtures/conformance-upstream";
import { createConnected, type Stack, startGatewayStack } from "../gateway/helpers";
import { type AuthProxy, createKey, runBounded, startAuthProxy } from "./helpers";

/** The whole suite takes a few seconds per target; this bounds a hung run. */
const RUN_TIMEOUT_MS = 120_000;
const SERVER_NAME = "conformance";

type Target = "direct" | "server" | "aggregated";

interface ExpectedFailures {
  /** Scenario → why it fails there, per target. */
  direct: Record<string, string>;
  server: Record<string, string>;
  aggregated: Record<string, string>;
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

interface ScenarioResult {
  scenario: string;
  checks: Check[];
  failed: boolean;
  summary: string;
}

interface Run {
  target: Target;
  url: string;
  code: number | null;
  durationMs: number;
  scenarios: ScenarioResult[];
  stdout: string;
}

const expected = JSON.parse(
  readFileSync(join(import.meta.dirname, "conformance-expected-failures.json"), "utf8"),
) as ExpectedFailures & { $comment?: unknown };

function conformanceEntry(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("@modelcontextprotocol/conformance/package.json");
  return join(dirname(manifest), "dist", "index.js");
}

/** `server-<scenario>-<ISO timestamp with dashes>` → scenario. */
function scenarioOfDir(dir: string): string {
  return dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, "");
}

function describeResult(checks: Check[]): string {
  const count = (status: string) => checks.filter((check) => check.status === status).length;
  const problems = checks
    .filter((check) => check.status === "FAILURE" || check.status === "WARNING")
    .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? ""}`.trim());
  return `${count("SUCCESS")} ok, ${count("FAILURE")} failed, ${count("WARNING")} warnings${problems.length ? ` — ${problems.join(" | ")}` : ""}`;
}

describe("MCP conformance suite", () => {
  let node22: string;
  let work: string;
  let upstream: ConformanceUpstream;
  let stack: Stack;
  const proxies: AuthProxy[] = [];
  let suite: string[] = [];
  const runs = new Map<Target, Run>();

  async function runSuite(target: Target, url: string): Promise<Run> {
    const out = join(work, target);
    const result = await runBounded(
      node22,
      [conformanceEntry(), "server", "--url", url, "--suite", "all", "-o", out],
      {
        cwd: work,
        timeoutMs: RUN_TIMEOUT_MS,
        env: { PATH: process.env.PATH ?? "", HOME: work, NO_COLOR: "1" },
      },
    );
    if (result.timedOut) throw new Error(`conformance run against ${target} timed out:\n${result.stdout}`);
    const scenarios = readdirSync(out).map((dir) => {
      const checks = JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")) as Check[];
      return {
        scenario: scenarioOfDir(dir),
        checks,
        failed: checks.some((check) => check.status === "FAILURE" || check.status === "WARNING"),
        summary: describeResult(checks),
      };
    });
    return {
      target,
      url,
      code: result.code,
      durationMs: result.durationMs,
      scenarios,
      stdout: result.stdout,
    };
  }

  beforeAll(async () => {
    node22 = ensureNode22();
    work = mkdtempSync(join(tmpdir(), "mcpgw-conformance-"));
    [upstream, stack] = await Promise.all([
      startConformanceUpstream(),
      startGatewayStack({ mcp: { loopbackOnly: true } }),
    ]);
    await createConnected(stack, { name: SERVER_NAME, url: upstream.url });
    const key = await createKey(stack, "conformance", [SERVER_NAME]);
    const authorization = `Bearer ${key.key}`;
    const [serverProxy, aggregatedProxy] = await Promise.all([
      startAuthProxy(`${stack.api.url}/mcp/${SERVER_NAME}`, { authorization }),
      startAuthProxy(`${stack.api.url}/mcp`, { authorization }),
    ]);
    proxies.push(serverProxy, aggregatedProxy);

    const listed = await runBounded(node22, [conformanceEntry(), "list", "--server"], {
      cwd: work,
      timeoutMs: 30_000,
      env: { PATH: process.env.PATH ?? "", HOME: work },
    });
    suite = [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1] as string);

    const started = Date.now();
    const all = await Promise.all([
      runSuite("direct", upstream.url),
      runSuite("server", serverProxy.url),
      runSuite("aggregated", aggregatedProxy.url),
    ]);
    for (const run of all) runs.set(run.target, run);
    console.log(`conformance: three runs in ${Date.now() - started} ms`);
  }, RUN_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await Promise.allSettled(proxies.map((proxy) => proxy.close()));
    await stack?.stop();
    await upstream?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the suite lists its server scenarios and every run produced a result for each", ({ expect }) => {
    expect(suite.length).toBeGreaterThanOrEqual(30);
    for (const run of runs.values()) {
      expect(run.scenarios.map((s) => s.scenario).sort(), run.target).toEqual([...suite].sort());
    }
  });

  it("the expected-failures file names real scenarios, each with a reason", ({ expect }) => {
    for (const target of ["direct", "server", "aggregated"] as const) {
      for (const [scenario, reason] of Object.entries(expected[target])) {
        expect(suite, `${target}: ${scenario}`).toContain(scenario);
        expect(reason.trim().length, `${target}: ${scenario} needs a reason`).toBeGreaterThan(10);
      }
    }
  });

  for (const target of ["direct", "server", "aggregated"] as const) {
    it(`${target}: every failure is expected (with its reason) and nothing expected to fail passes`, ({
      expect,
    }) => {
      const run = runs.get(target) as Run;
      const failed = run.scenarios.filter((s) => s.failed);
      const passed = run.scenarios.filter((s) => !s.failed);
      const checks = run.scenarios.flatMap((s) => s.checks);
      console.log(
        [
          `conformance ${target} (${run.url}): ${passed.length} scenarios passed, ${failed.length} failed ` +
            `of ${run.scenarios.length}; checks ${checks.filter((c) => c.status === "SUCCESS").length} ok, ` +
            `${checks.filter((c) => c.status === "FAILURE").length} failed, ` +
            `${checks.filter((c) => c.status === "WARNING").length} warnings; ${run.durationMs} ms`,
          ...failed.map(
            (s) =>
              `  ✗ ${s.scenario} — ${expected[target][s.scenario] ?? "NOT EXPECTED"}\n      ${s.summary}`,
          ),
        ].join("\n"),
      );
      const unexpected = failed
        .filter((s) => !(s.scenario in expected[target]))
        .map((s) => `${s.scenario}: ${s.summary}`);
      expect(unexpected, "failures missing from conformance-expected-failures.json").toEqual([]);
      const stale = passed.filter((s) => s.scenario in expected[target]).map((s) => s.scenario);
      expect(stale, "listed as expected failures but passing now: remove them").toEqual([]);
    });
  }

  it("reasons that say a scenario passes on /mcp/{server} are true", ({ expect }) => {
    const server = runs.get("server") as Run;
    const claimed = Object.entries(expected.aggregated)
      .filter(([, reason]) => /passes on \/mcp\/\{server\}|On \/mcp\/\{server\} it passes/.test(reason))
      .map(([scenario]) => scenario);
    expect(claimed.length).toBeGreaterThan(0);
    for (const scenario of claimed) {
      const result = server.scenarios.find((s) => s.scenario === scenario);
      expect(result?.failed, `${scenario} on /mcp/{server}: ${result?.summary}`).toBe(false);
    }
  });

  it("the upstream alone passes every active scenario (so the gateway's failures are the gateway's)", ({
    expect,
  }) => {
    const direct = runs.get("direct") as Run;
    expect(direct.scenarios.filter((s) => s.failed).map((s) => s.scenario)).toEqual(
      Object.keys(expected.direct),
    );
    // What /mcp/{server} must keep: initialization, ping, tools with every content type, tool errors,
    // JSON Schema 2020-12 preserved, and DNS-rebinding protection.
    const server = runs.get("server") as Run;
    const passedThrough = server.scenarios.filter((s) => !s.failed).map((s) => s.scenario);
    expect(passedThrough).toEqual(
      expect.arrayContaining([
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-error",
        "json-schema-2020-12",
        "dns-rebinding-protection",
      ]),
    );
  });
});
