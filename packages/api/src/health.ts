import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { bounded, CHECK_STATES, type CheckState, type Dependency, type Store } from "@mcpgw/aws";
import { AppError, type Logger } from "@mcpgw/core";
import { everyRunner, type RunnerEndpoint, type RunnerRoute } from "@mcpgw/upstream";
import type { AuditHealth } from "./audit-writer";
import type { AppEnv } from "./env";
import { json } from "./openapi-helpers";
import { problem } from "./problem";
import { Problem } from "./views";

/** How long a readiness answer is reused: /readyz costs at most one round of checks per this. */
export const READINESS_CACHE_MS = 1_500;

/** What `/readyz` checks: the AWS resources always; the stdio runner when `runner` is set (`npm run dev`). */
export interface ReadinessOptions {
  /** Check this runner's `GET /healthz` too. */
  runner?: RunnerRoute | undefined;
  /** How long an answer is reused (default {@link READINESS_CACHE_MS}). */
  cacheMs?: number;
  /** How long each check may take (default 2 s). */
  timeoutMs?: number;
  /** The audit writer's health (`checks.audit`; a failing one makes the answer `degraded`, not failed). */
  audit?: (() => AuditHealth | undefined) | undefined;
}

export const CheckStateView = z.enum(CHECK_STATES).openapi("CheckState", {
  description:
    "`ok`; `missing` (does not exist); `unusable` (a key disabled or pending deletion); `unreachable` " +
    "(nothing answered); `timeout` (no answer in time); `error` (another refusal, e.g. access denied)",
});
export const ReadinessChecks = z
  .object({
    table: CheckStateView,
    queue: CheckStateView,
    key: CheckStateView,
    runner: CheckStateView.optional().openapi({
      description: "only where the runner is checked (`npm run dev`)",
    }),
    audit: CheckStateView.optional().openapi({
      description:
        "where the audit trail is written: its last write's state (a failing one makes the answer `degraded`, never 503)",
    }),
  })
  .openapi("ReadinessChecks");
export type ReadinessChecks = z.infer<typeof ReadinessChecks>;
export const Ready = z
  .object({
    ok: z.literal(true),
    degraded: z.boolean().openapi({
      description:
        "true while something calls do not wait on is failing (the audit trail's writes): calls still work",
    }),
    checks: ReadinessChecks,
  })
  .openapi("Ready");
export const NotReady = Problem.extend({ checks: ReadinessChecks }).openapi("NotReady");
const Alive = z.object({ ok: z.literal(true) }).openapi("Alive");

/** One answer of the readiness checks. */
export interface ReadinessReport {
  ok: boolean;
  /** A check that does not fail readiness is failing (`checks.audit`). */
  degraded: boolean;
  checks: ReadinessChecks;
}

/**
 * The readiness checks, run in parallel (each bounded in time) and reused for `cacheMs`, one round in
 * flight at most — so however often /readyz is asked, AWS sees a few cheap calls per `cacheMs`. What
 * they find feeds the store's outage log: a missing resource is logged (once per interval), one that
 * answers again is logged as back.
 */
export class Readiness {
  private last: { settledAt: number | undefined; report: Promise<ReadinessReport> } | undefined;

  constructor(
    private readonly store: Pick<Store, "resources" | "outages">,
    private readonly logger: Logger,
    private readonly options: ReadinessOptions = {},
  ) {}

  check(): Promise<ReadinessReport> {
    const cacheMs = this.options.cacheMs ?? READINESS_CACHE_MS;
    const last = this.last;
    if (last && (last.settledAt === undefined || Date.now() - last.settledAt < cacheMs)) return last.report;
    const current: NonNullable<typeof this.last> = { settledAt: undefined, report: this.run() };
    current.report.then(
      () => {
        current.settledAt = Date.now();
      },
      () => {
        if (this.last === current) this.last = undefined;
      },
    );
    this.last = current;
    return current.report;
  }

  private async run(): Promise<ReadinessReport> {
    const { runner, timeoutMs } = this.options;
    const [resources, runnerState] = await Promise.all([
      this.store.resources.check(timeoutMs),
      runner ? checkRunners(runner, timeoutMs) : undefined,
    ]);
    const logger = this.logger.child({ source: "readiness" });
    for (const [dependency, state] of Object.entries(resources) as Array<[Dependency, CheckState]>) {
      if (state === "ok") this.store.outages.recovered(logger, dependency);
      else if (state === "missing" || state === "unusable")
        this.store.outages.note(logger, dependency, state);
    }
    const required: ReadinessChecks = { ...resources, ...(runnerState ? { runner: runnerState } : {}) };
    const audit = this.options.audit?.()?.state;
    return {
      ok: Object.values(required).every((state) => state === "ok"),
      degraded: audit !== undefined && audit !== "ok",
      checks: { ...required, ...(audit ? { audit } : {}) },
    };
  }
}

/**
 * The stdio runner's `GET /healthz` (no token needed), bounded like the other checks; in a fleet, ok
 * while any live runner answers (`missing` when none is registered and alive).
 */
function checkRunners(route: RunnerRoute, timeoutMs = 2_000): Promise<CheckState> {
  return bounded(timeoutMs, async () => {
    const runners = await everyRunner(route);
    if (runners.length === 0) return "missing";
    const states = await Promise.all(runners.map((runner) => checkRunner(runner, timeoutMs)));
    return states.find((state) => state === "ok") ?? states[0] ?? "error";
  });
}

function checkRunner(runner: RunnerEndpoint, timeoutMs = 2_000): Promise<CheckState> {
  return bounded(timeoutMs, async (signal) => {
    const response = await fetch(`${runner.url.replace(/\/$/, "")}/healthz`, { signal });
    await response.body?.cancel();
    return response.ok ? "ok" : "error";
  });
}

const CHECK_NAMES: Record<keyof ReadinessChecks, string> = {
  table: "the table",
  queue: "the job queue",
  key: "the KMS key",
  runner: "the stdio runner",
  audit: "the audit trail",
};
const STATE_WORDS: Record<Exclude<CheckState, "ok">, string> = {
  missing: "missing",
  unusable: "disabled or pending deletion",
  unreachable: "unreachable",
  timeout: "not answering in time",
  error: "refusing the check",
};

/** `Not ready: the table is missing and the stdio runner is unreachable.` */
export function describeNotReady(checks: ReadinessChecks): string {
  const failing = (Object.entries(checks) as Array<[keyof ReadinessChecks, CheckState]>).flatMap(
    ([name, state]) => (state === "ok" ? [] : [`${CHECK_NAMES[name]} is ${STATE_WORDS[state]}`]),
  );
  const listed =
    failing.length > 1 ? `${failing.slice(0, -1).join(", ")} and ${failing.at(-1)}` : (failing[0] ?? "");
  return `Not ready: ${listed}.`;
}

/**
 * `GET /healthz` — liveness: the process answers HTTP; it checks nothing else, so it stays cheap and
 * an outage elsewhere never gets a healthy process restarted. `GET /readyz` — readiness: the table,
 * job queue and key (and, in `npm run dev`, the stdio runner) answer; 503 naming what does not.
 */
export function registerHealthRoutes(app: OpenAPIHono<AppEnv>, readiness: Readiness): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["health"],
      summary: "Liveness: the process answers (checks no dependency)",
      responses: { 200: json(Alive, "Alive") },
    }),
    (c) => c.json({ ok: true as const }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/readyz",
      tags: ["health"],
      summary: "Readiness: the table, job queue and KMS key (and the local stdio runner) answer",
      description:
        "Each check is one cheap call with a short timeout, run in parallel; the answer is reused for " +
        `${READINESS_CACHE_MS / 1000} s. 503 names what is not ready.`,
      responses: {
        200: json(Ready, "Every dependency answers"),
        503: {
          content: { "application/problem+json": { schema: NotReady } },
          description: "Not ready: `checks` says which dependency is not, and how",
        },
      },
    }),
    async (c) => {
      const report = await readiness.check();
      if (!report.ok) {
        const response = problem(
          c,
          new AppError("service.not_ready", describeNotReady(report.checks), { checks: report.checks }),
        );
        response.headers.set("cache-control", "no-store");
        // problem+json, documented above; the typed helpers only build application/json.
        return response as never;
      }
      c.header("cache-control", "no-store");
      return c.json({ ok: true as const, degraded: report.degraded, checks: report.checks }, 200);
    },
  );
}
