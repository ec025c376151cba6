/**
 * The MCP conformance suite's client-mode authorization scenarios (`conformance client --scenario
 * auth/…`, 0.2.0-alpha.12 on Node 22) against the gateway as an OAuth client of the upstreams it
 * fronts. Each scenario starts its own MCP server and authorization server and runs
 * tests/upstream-oauth/conformance-driver.ts with the server's URL: the driver registers it with the
 * gateway (admin API), starts the authorization, follows the URL as a browser to the gateway's
 * callback, waits for the worker's probe to connect and calls the server's tool. The scenarios are
 * every `auth/*` one each requirement set names (2025-11-25 and 2026-07-28, the scored ones and the
 * extensions it reports unscored) and the 2025-03-26 back-compat ones (`--spec-version 2025-03-26`:
 * that revision has no requirement set), each run at its revision's wire, a few at a time against one
 * stack.
 *
 * A scenario fails as the suite counts it (its exit status: any FAILURE or WARNING check, or the
 * driver failing where the scenario expects it to succeed). conformance-baselines/<era>.client.json
 * names each scenario expected to fail with its reason: the test fails on a failure that is not listed
 * and on a listed scenario that passes. Regenerate from a run (kept reasons stay; a new failure gets
 * its failing checks as a provisional reason — replace it with the cause):
 *
 *   UPDATE_CONFORMANCE_BASELINE=1 npx vitest run tests/upstream-oauth/conformance-client.test.ts
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { ensureNode22 } from "../../scripts/lib/node22";
import { runBounded } from "../mcp/helpers";
import { TEST_ADMIN_TOKEN } from "../support/app";
import { type Stack, startStack } from "../support/stack";

const ERAS = ["2026-07-28", "2025-11-25", "2025-03-26"] as const;
/** Revisions the suite has a frozen requirement set for; the others list by `--spec-version`. */
const REQUIREMENT_SETS: readonly Era[] = ["2026-07-28", "2025-11-25"];
type Era = (typeof ERAS)[number];
const CLI = join(import.meta.dirname, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");
const DRIVER = join(import.meta.dirname, "conformance-driver.ts");
const BASELINES = join(import.meta.dirname, "conformance-baselines");
const UPDATE = process.env.UPDATE_CONFORMANCE_BASELINE === "1";
/** The suite's own bound on the driver (it kills it and fails the scenario). */
const SCENARIO_TIMEOUT_MS = 25_000;
/** Our bound on one `conformance client` run (the suite's bound plus its start and stop). */
const RUN_TIMEOUT_MS = 45_000;
/** Scenarios run side by side (the machine is small and shared). */
const CONCURRENCY = 4;
/** What the scenarios' authorization servers issue or accept: never to be seen in the clear. */
const SECRET_PATTERNS = [
  /test-token-\d+/,
  /test-token-prereg-\d+/,
  /test-auth-code/,
  /pre-registered-secret/,
];

interface Baseline {
  $comment: string;
  era: Era;
  /** Scenario → why it fails. */
  failures: Record<string, string>;
}

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

interface ScenarioResult {
  era: Era;
  scenario: string;
  failed: boolean;
  /** The failing checks (`STATUS id: message`) and what the driver said. */
  problems: string[];
  durationMs: number;
  /** What the driver printed (the suite saves it), to look for secrets in. */
  output: string;
}

const baselinePath = (era: Era) => join(BASELINES, `${era}.client.json`);

function readBaseline(era: Era): Baseline {
  try {
    return JSON.parse(readFileSync(baselinePath(era), "utf8")) as Baseline;
  } catch (error) {
    if (UPDATE) return { $comment: "", era, failures: {} };
    throw error;
  }
}

function writeBaseline(era: Era, results: ScenarioResult[], before: Baseline): Baseline {
  const failures: Record<string, string> = {};
  for (const result of [...results].sort((a, b) => a.scenario.localeCompare(b.scenario)))
    if (result.failed)
      failures[result.scenario] =
        before.failures[result.scenario] ??
        `Unexplained (recorded by UPDATE_CONFORMANCE_BASELINE): ${result.problems.join(" | ").slice(0, 400)}`;
  const baseline: Baseline = {
    $comment:
      `Client-mode auth scenarios (${REQUIREMENT_SETS.includes(era) ? "--requirements" : "--spec-version"} ${era}) expected to fail against the gateway as an OAuth client of its upstreams, each with its reason. ` +
      "A scenario fails as the suite counts it (a FAILURE or WARNING check, or the driver failing). tests/upstream-oauth/conformance-client.test.ts " +
      "fails on an unlisted failure and on a listed scenario that passes; UPDATE_CONFORMANCE_BASELINE=1 rewrites this file from a run.",
    era,
    failures,
  };
  writeFileSync(baselinePath(era), `${JSON.stringify(baseline, null, 2)}\n`);
  return baseline;
}

/**
 * The `auth/*` client scenarios of `conformance list --client --requirements <era>` (scored and
 * unscored), or of `--spec-version <era>` for a revision with no requirement set.
 */
function parseAuthScenarios(listing: string): string[] {
  const found: string[] = [];
  let section: "client" | "unscored" | "other" = "other";
  for (const line of listing.split("\n")) {
    if (/^Client scenarios/.test(line)) section = "client";
    else if (/^Server scenarios/.test(line)) section = "other";
    else if (/^Run and reported, but never scored/.test(line)) section = "unscored";
    const item = /^\s+- (auth\/\S+)(?: \[([^\]]+)\])?\s*$/.exec(line);
    if (!item) continue;
    if (section === "client" || (section === "unscored" && item[2] === "client"))
      found.push(item[1] as string);
  }
  return found;
}

/** The driver's stdout and stderr, as the suite saved them. */
function driverOutput(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("stdout.txt") || file.endsWith("stderr.txt"))
    .map((file) => readFileSync(join(dir, file), "utf8"))
    .join("\n");
}

function checksOf(dir: string): Check[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("checks.json"))
    .flatMap((file) => JSON.parse(readFileSync(join(dir, file), "utf8")) as Check[]);
}

/** Runs `tasks` with at most `limit` at once, results in order. */
async function pool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}

describe("MCP conformance suite, client-mode auth scenarios: the gateway as an OAuth client", () => {
  let stack: Stack;
  let node22: string;
  let work: string;
  const scenarios = new Map<Era, string[]>();
  const results = new Map<Era, ScenarioResult[]>();
  const baselines = new Map<Era, Baseline>();

  async function runScenario(era: Era, scenario: string): Promise<ScenarioResult> {
    const out = mkdtempSync(join(work, "run-"));
    const command = `${node22} --disable-warning=ExperimentalWarning ${DRIVER}`;
    const run = await runBounded(
      node22,
      [CLI, "client", "--command", command, "--scenario", scenario, "--spec-version", era, "--force"].concat([
        "--timeout",
        String(SCENARIO_TIMEOUT_MS),
        "-o",
        out,
      ]),
      {
        cwd: work,
        timeoutMs: RUN_TIMEOUT_MS,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: work,
          NO_COLOR: "1",
          CONFORMANCE_GATEWAY_URL: stack.api.url,
          CONFORMANCE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        },
      },
    );
    const checks = checksOf(out);
    const problems = checks
      .filter((check) => check.status === "FAILURE" || check.status === "WARNING")
      .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? check.description ?? ""}`.trim());
    const driver = /conformance driver \([^)]*\): (.*)/.exec(run.stderr)?.[1];
    if (driver) problems.push(`driver: ${driver}`);
    if (run.timedOut) problems.push(`killed after ${RUN_TIMEOUT_MS} ms`);
    if (checks.length === 0) problems.push(`no checks written (exit ${run.code}): ${run.stderr.slice(-300)}`);
    return {
      era,
      scenario,
      failed: run.code !== 0 || run.timedOut || checks.length === 0,
      problems,
      durationMs: run.durationMs,
      output: driverOutput(out),
    };
  }

  beforeAll(async () => {
    node22 = ensureNode22();
    work = mkdtempSync(join(tmpdir(), "mcpgw-conformance-client-"));
    stack = await startStack();
    for (const era of ERAS) {
      const by = REQUIREMENT_SETS.includes(era) ? "--requirements" : "--spec-version";
      const listed = await runBounded(node22, [CLI, "list", "--client", by, era], {
        cwd: work,
        timeoutMs: 30_000,
        env: { PATH: process.env.PATH ?? "", HOME: work, NO_COLOR: "1" },
      });
      if (listed.code !== 0)
        throw new Error(`conformance list (${era}) exited ${listed.code}:\n${listed.stderr}`);
      scenarios.set(era, parseAuthScenarios(listed.stdout));
    }
    const started = Date.now();
    const all = await pool(
      ERAS.flatMap((era) =>
        (scenarios.get(era) as string[]).map((scenario) => () => runScenario(era, scenario)),
      ),
      CONCURRENCY,
    );
    const lines = [`conformance client auth scenarios: ${all.length} runs in ${Date.now() - started} ms`];
    for (const era of ERAS) {
      const mine = all.filter((result) => result.era === era);
      results.set(era, mine);
      const before = readBaseline(era);
      const after = UPDATE ? writeBaseline(era, mine, before) : before;
      baselines.set(era, after);
      const failed = mine.filter((result) => result.failed);
      lines.push(
        `  ${era}: ${mine.length - failed.length}/${mine.length} passed; expected failures ${Object.keys(before.failures).length} → ${failed.length}${UPDATE ? " (baseline rewritten)" : ""}`,
      );
      for (const result of mine)
        lines.push(
          `      ${result.failed ? "✗" : "✓"} ${result.scenario} (${result.durationMs} ms)${
            result.failed && !(result.scenario in after.failures) ? "  ← NOT LISTED" : ""
          }${!result.failed && result.scenario in after.failures ? "  ← listed but passes now: remove it" : ""}${
            result.failed ? `: ${result.problems.join(" | ").slice(0, 400)}` : ""
          }`,
        );
    }
    console.log(lines.join("\n"));
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("each era names its auth scenarios, and each ran", ({ expect }) => {
    expect((scenarios.get("2026-07-28") as string[]).length).toBeGreaterThanOrEqual(27);
    expect((scenarios.get("2025-11-25") as string[]).length).toBeGreaterThanOrEqual(14);
    expect(scenarios.get("2025-03-26")).toEqual([
      "auth/2025-03-26-oauth-metadata-backcompat",
      "auth/2025-03-26-oauth-endpoint-fallback",
    ]);
    for (const era of ERAS)
      expect((results.get(era) as ScenarioResult[]).map((result) => result.scenario)).toEqual(
        scenarios.get(era),
      );
  });

  it("each baseline names scenarios of its era, each with a reason", ({ expect }) => {
    for (const era of ERAS) {
      const baseline = baselines.get(era) as Baseline;
      expect(baseline.era).toBe(era);
      for (const [scenario, reason] of Object.entries(baseline.failures)) {
        expect(scenarios.get(era), `${era}: ${scenario}`).toContain(scenario);
        expect(reason.trim().length, `${era}: ${scenario} needs a reason`).toBeGreaterThan(10);
      }
    }
  });

  for (const era of ERAS)
    it(`${era}: the failures are exactly the listed ones`, ({ expect }) => {
      const mine = results.get(era) as ScenarioResult[];
      const { failures } = baselines.get(era) as Baseline;
      const unexpected = mine
        .filter((result) => result.failed && !(result.scenario in failures))
        .map((result) => `${result.scenario}: ${result.problems.join(" | ")}`);
      expect(unexpected, `failures missing from ${baselinePath(era)}`).toEqual([]);
      const stale = mine.filter((result) => !result.failed && result.scenario in failures);
      expect(
        stale.map((result) => result.scenario),
        `listed in ${baselinePath(era)} but passing now: remove them`,
      ).toEqual([]);
    });

  it("no access token, code or client secret of the scenarios in the gateway's logs or the driver's output", ({
    expect,
  }) => {
    const everything = [
      ...stack.logs,
      ...ERAS.flatMap((era) => (results.get(era) as ScenarioResult[]).map((result) => result.output)),
    ].join("\n");
    for (const pattern of SECRET_PATTERNS) expect(everything).not.toMatch(pattern);
  });
});
