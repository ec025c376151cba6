/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, server mode, on
 * Node 22) run for each protocol era — `--requirements 2026-07-28` and `--requirements 2025-11-25`, every
 * server scenario each revision runs (the scored ones and the ones it reports unscored) — against three
 * targets:
 *
 *  - `direct`: the conformance fixture itself (tests/fixtures/conformance-upstream.ts, both eras on one
 *    URL) — the baseline that shows the upstream offers what every scenario expects;
 *  - `server`: the gateway's `/mcp/{server}` fronting that fixture;
 *  - `aggregated`: the gateway's `/mcp`.
 *
 * The suite's client cannot send an Authorization header, so each gateway run goes through a tiny
 * 127.0.0.1 proxy that adds the client key and forwards everything else (Host and Origin included, so the
 * DNS-rebinding scenario still reaches the gateway's own checks; the stack listens loopback-only).
 *
 * A scenario fails as the suite's own `--expected-failures` baseline counts it: any FAILURE or WARNING
 * check. Each era and target has its baseline, conformance-baselines/<era>.<target>.json, naming each
 * scenario expected to fail with its reason: the test fails on a failure that is not listed and on a
 * listed scenario that passes (the lists stay honest, and shrink as the gateway learns an era).
 *
 * Regenerate the baselines from a run (kept reasons stay; a new failure gets its failing checks as a
 * provisional reason — replace it with the cause):
 *
 *   UPDATE_CONFORMANCE_BASELINE=1 npx vitest run tests/mcp/conformance.test.ts
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { ensureNode22 } from "../../scripts/lib/node22";
import { type ConformanceUpstream, startConformanceUpstream } from "../fixtures/conformance-upstream";
import { createConnected, type Stack, startGatewayStack } from "../gateway/helpers";
import { type AuthProxy, createKey, runBounded, startAuthProxy } from "./helpers";

const ERAS = ["2026-07-28", "2025-11-25"] as const;
const TARGETS = ["direct", "server", "aggregated"] as const;
type Era = (typeof ERAS)[number];
type Target = (typeof TARGETS)[number];

/** Per-scenario bound the suite applies itself (a scenario that waits for what never comes). */
const SCENARIO_TIMEOUT_MS = 15_000;
/** Bounds one whole run (one era against one target). */
const RUN_TIMEOUT_MS = 300_000;
const SERVER_NAME = "conformance";
const UPDATE = process.env.UPDATE_CONFORMANCE_BASELINE === "1";
const BASELINES = join(import.meta.dirname, "conformance-baselines");
const TARGET_LABEL: Record<Target, string> = {
  direct: "the fixture directly",
  server: "/mcp/{server}",
  aggregated: "/mcp",
};

interface Baseline {
  $comment: string;
  era: Era;
  target: Target;
  /** Scenario → why it fails there. */
  failures: Record<string, string>;
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO" | string;
  errorMessage?: string;
}

interface ScenarioResult {
  scenario: string;
  /** False when the run produced no result for it (killed at the run's bound, or crashed). */
  reported: boolean;
  failed: boolean;
  /** The failing checks, `STATUS id: message`. */
  problems: string[];
  summary: string;
}

interface Run {
  era: Era;
  target: Target;
  url: string;
  code: number | null;
  /** Killed at {@link RUN_TIMEOUT_MS}: the scenarios it had not finished are failed and unreported. */
  timedOut: boolean;
  durationMs: number;
  scenarios: ScenarioResult[];
}

/** What `conformance list --server --requirements <era>` names. */
interface ScenarioSet {
  /** Scored: the revision requires them. */
  required: string[];
  /** Run and reported but never scored (extensions, pending, added after the release). */
  unscored: string[];
}

const baselinePath = (era: Era, target: Target) => join(BASELINES, `${era}.${target}.json`);

function readBaseline(era: Era, target: Target): Baseline {
  try {
    return JSON.parse(readFileSync(baselinePath(era, target), "utf8")) as Baseline;
  } catch (error) {
    if (UPDATE) return { $comment: "", era, target, failures: {} };
    throw error;
  }
}

function conformanceEntry(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("@modelcontextprotocol/conformance/package.json");
  return join(dirname(manifest), "dist", "index.js");
}

/** Parses `conformance list --server --requirements <era>`. */
function parseScenarioList(listing: string): ScenarioSet {
  const required: string[] = [];
  const unscored: string[] = [];
  let section: "required" | "client" | "unscored" | undefined;
  for (const line of listing.split("\n")) {
    if (/^Server scenarios/.test(line)) section = "required";
    else if (/^Client scenarios/.test(line)) section = "client";
    else if (/^Run and reported, but never scored/.test(line)) section = "unscored";
    const item = /^\s+- (\S+)(?: \[(server|client)\])?\s*$/.exec(line);
    if (!item) continue;
    if (section === "required") required.push(item[1] as string);
    else if (section === "unscored" && item[2] === "server") unscored.push(item[1] as string);
  }
  return { required, unscored };
}

/** `server-<scenario>-<ISO timestamp with dashes>` → scenario. */
function scenarioOfDir(dir: string): string {
  return dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, "");
}

function summarize(checks: Check[]): { failed: boolean; problems: string[]; summary: string } {
  const count = (status: string) => checks.filter((check) => check.status === status).length;
  const problems = checks
    .filter((check) => check.status === "FAILURE" || check.status === "WARNING")
    .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? ""}`.trim());
  return {
    failed: problems.length > 0,
    problems,
    summary: `${count("SUCCESS")} ok, ${count("FAILURE")} failed, ${count("WARNING")} warnings${problems.length ? ` — ${problems.join(" | ")}` : ""}`,
  };
}

/** The error lines of a run's stderr (not the stack frames), shortened. */
function errorLines(stderr: string): string {
  const lines = stderr.split("\n").filter((line) => line.trim() && !/^\s+at /.test(line));
  return lines.join(" / ").slice(0, 400);
}

/** A provisional reason for a failure the baseline did not list: what failed, shortened. */
function provisionalReason(result: ScenarioResult): string {
  const what = result.problems.join(" | ").replace(/\s+/g, " ");
  return `Unexplained (recorded by UPDATE_CONFORMANCE_BASELINE): ${what.length > 400 ? `${what.slice(0, 400)}…` : what}`;
}

function writeBaseline(era: Era, target: Target, run: Run, before: Baseline): Baseline {
  const failures: Record<string, string> = {};
  for (const result of [...run.scenarios].sort((a, b) => a.scenario.localeCompare(b.scenario)))
    if (result.failed)
      failures[result.scenario] = before.failures[result.scenario] ?? provisionalReason(result);
  const baseline: Baseline = {
    $comment:
      `Conformance scenarios (--requirements ${era}) expected to fail against ${TARGET_LABEL[target]}, each with its reason. ` +
      "A scenario fails when any check is FAILURE or WARNING. tests/mcp/conformance.test.ts fails on an unlisted failure " +
      "and on a listed scenario that passes; UPDATE_CONFORMANCE_BASELINE=1 rewrites this file from a run.",
    era,
    target,
    failures,
  };
  writeFileSync(baselinePath(era, target), `${JSON.stringify(baseline, null, 2)}\n`);
  return baseline;
}

describe("MCP conformance suite (both eras)", () => {
  let node22: string;
  let work: string;
  let upstream: ConformanceUpstream;
  let stack: Stack;
  const proxies: AuthProxy[] = [];
  const sets = new Map<Era, ScenarioSet>();
  const runs = new Map<string, Run>();
  const baselines = new Map<string, Baseline>();
  const key = (era: Era, target: Target) => `${era}/${target}`;

  async function listScenarios(era: Era): Promise<ScenarioSet> {
    const listed = await runBounded(node22, [conformanceEntry(), "list", "--server", "--requirements", era], {
      cwd: work,
      timeoutMs: 30_000,
      env: { PATH: process.env.PATH ?? "", HOME: work, NO_COLOR: "1" },
    });
    if (listed.code !== 0)
      throw new Error(`conformance list (${era}) exited ${listed.code}:\n${listed.stderr}`);
    return parseScenarioList(listed.stdout);
  }

  async function runSuite(era: Era, target: Target, url: string, expected: string[]): Promise<Run> {
    const out = join(work, era, target);
    const result = await runBounded(
      node22,
      [
        conformanceEntry(),
        "server",
        "--url",
        url,
        "--requirements",
        era,
        "--timeout",
        String(SCENARIO_TIMEOUT_MS),
        "-o",
        out,
      ],
      {
        cwd: work,
        timeoutMs: RUN_TIMEOUT_MS,
        env: { PATH: process.env.PATH ?? "", HOME: work, NO_COLOR: "1" },
      },
    );
    let dirs: string[] = [];
    try {
      dirs = readdirSync(out);
    } catch {
      if (!result.timedOut)
        throw new Error(
          `conformance ${era} against ${target} wrote no results (exit ${result.code}):\n${result.stderr}`,
        );
    }
    const scenarios = dirs.map((dir): ScenarioResult => {
      const scenario = scenarioOfDir(dir);
      try {
        const checks = JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")) as Check[];
        return { scenario, reported: true, ...summarize(checks) };
      } catch {
        // The scenario ended without writing its checks (it threw): what it printed is the evidence.
        const printed = new RegExp(`=== Running scenario: ${scenario} ===\\n([\\s\\S]*?)(?:\\n=== |$)`).exec(
          result.stdout,
        );
        const problem = `FAILURE no-checks: the scenario wrote no checks.json; it printed: ${(printed?.[1] ?? "").trim().slice(0, 300)}; the run's stderr says: ${errorLines(result.stderr)}`;
        return { scenario, reported: true, failed: true, problems: [problem], summary: problem };
      }
    });
    for (const scenario of expected.filter((name) => !scenarios.some((s) => s.scenario === name))) {
      const problem = `FAILURE no-result: the run ${result.timedOut ? `was killed after ${RUN_TIMEOUT_MS} ms` : `exited ${result.code}`} before this scenario reported`;
      scenarios.push({ scenario, reported: false, failed: true, problems: [problem], summary: problem });
    }
    const { code, timedOut, durationMs } = result;
    return { era, target, url, code, timedOut, durationMs, scenarios };
  }

  beforeAll(
    async () => {
      node22 = ensureNode22();
      work = mkdtempSync(join(tmpdir(), "mcpgw-conformance-"));
      [upstream, stack] = await Promise.all([
        startConformanceUpstream(),
        startGatewayStack({ mcp: { loopbackOnly: true } }),
      ]);
      // Pinning `auto`: the suite mutates the tool list and waits for list_changed (under `approve`, the
      // default, a mutation waits for an admin and clients hear nothing: tests/mcp/pinning.test.ts).
      await createConnected(stack, { name: SERVER_NAME, url: upstream.url, pinning: "auto" });
      const created = await createKey(stack, "conformance", [SERVER_NAME]);
      const authorization = `Bearer ${created.key}`;
      const [serverProxy, aggregatedProxy] = await Promise.all([
        startAuthProxy(`${stack.api.url}/mcp/${SERVER_NAME}`, { authorization }),
        startAuthProxy(`${stack.api.url}/mcp`, { authorization }),
      ]);
      proxies.push(serverProxy, aggregatedProxy);
      const urls: Record<Target, string> = {
        direct: upstream.url,
        server: serverProxy.url,
        aggregated: aggregatedProxy.url,
      };

      for (const era of ERAS) sets.set(era, await listScenarios(era));
      const started = Date.now();
      // One era at a time, its three targets side by side (the machine is small and shared).
      for (const era of ERAS) {
        const { required, unscored } = sets.get(era) as ScenarioSet;
        const done = await Promise.all(
          TARGETS.map((target) => runSuite(era, target, urls[target], [...required, ...unscored])),
        );
        for (const run of done) runs.set(key(era, run.target), run);
      }

      const lines = [
        `conformance: ${runs.size} runs in ${Date.now() - started} ms (expected failures: before → after)`,
      ];
      for (const era of ERAS) {
        const { required } = sets.get(era) as ScenarioSet;
        for (const target of TARGETS) {
          const run = runs.get(key(era, target)) as Run;
          const before = readBaseline(era, target);
          const failed = run.scenarios.filter((s) => s.failed);
          const requiredPassed = run.scenarios.filter(
            (s) => !s.failed && required.includes(s.scenario),
          ).length;
          const after = UPDATE ? writeBaseline(era, target, run, before) : before;
          baselines.set(key(era, target), after);
          lines.push(
            `  ${era} ${TARGET_LABEL[target].padEnd(20)} ${run.scenarios.length - failed.length}/${run.scenarios.length} passed ` +
              `(required ${requiredPassed}/${required.length}); expected failures ${Object.keys(before.failures).length} → ${failed.length}` +
              `${UPDATE ? " (baseline rewritten)" : ""}; ${run.durationMs} ms`,
          );
          for (const s of failed)
            lines.push(
              `      ✗ ${s.scenario}${s.scenario in after.failures ? "" : "  ← NOT LISTED"}: ${s.summary.slice(0, 300)}`,
            );
          for (const listed of Object.keys(after.failures))
            if (run.scenarios.some((s) => s.scenario === listed && !s.failed))
              lines.push(`      ✓ ${listed}  ← listed but passes now: remove it`);
        }
      }
      console.log(lines.join("\n"));
    },
    2 * RUN_TIMEOUT_MS + 120_000,
  );

  afterAll(async () => {
    await Promise.allSettled(proxies.map((proxy) => proxy.close()));
    await stack?.stop();
    await upstream?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("each era lists its server scenarios, and every run reported each of them", ({ expect }) => {
    expect((sets.get("2026-07-28") as ScenarioSet).required.length).toBeGreaterThanOrEqual(37);
    expect((sets.get("2025-11-25") as ScenarioSet).required.length).toBeGreaterThanOrEqual(30);
    for (const era of ERAS) {
      const { required, unscored } = sets.get(era) as ScenarioSet;
      for (const target of TARGETS) {
        const run = runs.get(key(era, target)) as Run;
        expect(run.timedOut, `${era} ${target}: the run hit its ${RUN_TIMEOUT_MS} ms bound`).toBe(false);
        expect(
          run.scenarios
            .filter((s) => s.reported)
            .map((s) => s.scenario)
            .sort(),
          `${era} ${target}`,
        ).toEqual([...required, ...unscored].sort());
      }
    }
  });

  it("each baseline names scenarios of its era, each with a reason", ({ expect }) => {
    for (const era of ERAS) {
      const { required, unscored } = sets.get(era) as ScenarioSet;
      for (const target of TARGETS) {
        const baseline = baselines.get(key(era, target)) as Baseline;
        expect(baseline.era, baselinePath(era, target)).toBe(era);
        expect(baseline.target, baselinePath(era, target)).toBe(target);
        for (const [scenario, reason] of Object.entries(baseline.failures)) {
          expect([...required, ...unscored], `${era} ${target}: ${scenario}`).toContain(scenario);
          expect(reason.trim().length, `${era} ${target}: ${scenario} needs a reason`).toBeGreaterThan(10);
        }
      }
    }
  });

  for (const era of ERAS)
    for (const target of TARGETS)
      it(`${era} against ${TARGET_LABEL[target]}: the failures are exactly the listed ones`, ({ expect }) => {
        const run = runs.get(key(era, target)) as Run;
        const { failures } = baselines.get(key(era, target)) as Baseline;
        const unexpected = run.scenarios
          .filter((s) => s.failed && !(s.scenario in failures))
          .map((s) => `${s.scenario}: ${s.summary}`);
        expect(unexpected, `failures missing from ${baselinePath(era, target)}`).toEqual([]);
        const stale = run.scenarios.filter((s) => !s.failed && s.scenario in failures).map((s) => s.scenario);
        expect(stale, `listed in ${baselinePath(era, target)} but passing now: remove them`).toEqual([]);
      });

  it("the fixture alone passes every scenario either era requires (so the gateway's failures are the gateway's)", ({
    expect,
  }) => {
    for (const era of ERAS) {
      const { required } = sets.get(era) as ScenarioSet;
      const direct = runs.get(key(era, "direct")) as Run;
      expect(
        direct.scenarios
          .filter((s) => s.failed && required.includes(s.scenario))
          .map((s) => `${s.scenario}: ${s.summary}`),
        era,
      ).toEqual([]);
    }
  });

  it("/mcp/{server} passes every scenario the fixture passes directly", ({ expect }) => {
    for (const era of ERAS) {
      const direct = runs.get(key(era, "direct")) as Run;
      const server = runs.get(key(era, "server")) as Run;
      const passedDirectly = new Set(direct.scenarios.filter((s) => !s.failed).map((s) => s.scenario));
      expect(
        server.scenarios
          .filter((s) => s.failed && passedDirectly.has(s.scenario))
          .map((s) => `${s.scenario}: ${s.summary}`),
        era,
      ).toEqual([]);
    }
  });

  it("/mcp fails only by name: every listed scenario passes on /mcp/{server}, or fails against the fixture too", ({
    expect,
  }) => {
    for (const era of ERAS) {
      const server = runs.get(key(era, "server")) as Run;
      const direct = runs.get(key(era, "direct")) as Run;
      const { failures } = baselines.get(key(era, "aggregated")) as Baseline;
      for (const scenario of Object.keys(failures)) {
        const failsDirectly = direct.scenarios.find((s) => s.scenario === scenario)?.failed === true;
        const onServer = server.scenarios.find((s) => s.scenario === scenario);
        expect(failsDirectly || onServer?.failed === false, `${era} ${scenario}: ${onServer?.summary}`).toBe(
          true,
        );
      }
    }
  });

  it("reasons that say a scenario passes on /mcp/{server} are true", ({ expect }) => {
    for (const era of ERAS) {
      const server = runs.get(key(era, "server")) as Run;
      const { failures } = baselines.get(key(era, "aggregated")) as Baseline;
      for (const [scenario, reason] of Object.entries(failures)) {
        if (!/passes on \/mcp\/\{server\}/.test(reason)) continue;
        const result = server.scenarios.find((s) => s.scenario === scenario);
        expect(result?.failed, `${era} ${scenario} on /mcp/{server}: ${result?.summary}`).toBe(false);
      }
    }
  });
});
