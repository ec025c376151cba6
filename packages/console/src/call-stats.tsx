/**
 * A server's or a tool's calls over the last hour or day (a toggle), from `GET /v1/audit/stats`: the
 * totals in words, and charts of calls per bucket, error rate and p50/p95 duration.
 */
import { useState } from "preact/hooks";
import { request } from "./api";
import { ms, Problem, usePolled } from "./components";
import { type ChartDot, TimeChart } from "./latency-chart";
import type { AuditStats } from "./types";

/** How often the figures reload themselves. */
const REFRESH_MS = 15_000;
const WINDOWS = { hour: "Last hour", day: "Last day" } as const;
type Window = keyof typeof WINDOWS;

/** The calls of `server` (a name), or of one tool (`tool`: `<server>__<tool>`), with a window toggle. */
export function CallStats(props: { server?: string; tool?: string; idBase: string }) {
  const [span, setSpan] = useState<Window>("hour");
  const query = new URLSearchParams({
    ...(props.server ? { server: props.server } : {}),
    ...(props.tool ? { tool: props.tool } : {}),
    window: span,
  });
  const stats = usePolled(() => request<AuditStats>("GET", `/v1/audit/stats?${query}`), REFRESH_MS, [
    query.toString(),
  ]);
  const data = stats.data?.window === span ? stats.data : undefined;
  return (
    <div class="call-stats" data-window={span}>
      <fieldset class="window-toggle">
        <legend>Window</legend>
        {(Object.keys(WINDOWS) as Window[]).map((key) => (
          <label key={key}>
            <input
              type="radio"
              name={`${props.idBase}-window`}
              value={key}
              checked={span === key}
              onChange={() => setSpan(key)}
            />
            {WINDOWS[key]}
          </label>
        ))}
      </fieldset>
      <Problem error={stats.error} />
      {data ? <StatsFigures stats={data} /> : stats.error ? null : <p class="loading">Loading…</p>}
    </div>
  );
}

function StatsFigures({ stats }: { stats: AuditStats }) {
  const { totals } = stats;
  const per = stats.window === "hour" ? "minute" : "30 minutes";
  const from = Date.parse(stats.buckets[0]?.at ?? new Date().toISOString());
  const to = from + stats.buckets.length * stats.bucketMs;
  const time =
    stats.window === "hour"
      ? undefined
      : (at: number) =>
          new Date(at).toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" });
  const used = stats.buckets.filter((bucket) => bucket.calls > 0);
  const mid = (at: string) => Date.parse(at) + stats.bucketMs / 2;
  const dots = (value: (b: (typeof used)[number]) => number | null, className: string, words: string) =>
    used.flatMap((bucket): ChartDot[] => {
      const v = value(bucket);
      return v === null
        ? []
        : [
            {
              key: `${className}-${bucket.at}`,
              at: mid(bucket.at),
              value: v,
              className,
              title: `${new Date(bucket.at).toLocaleTimeString()}: ${words.replace("#", String(Math.round(v * 10) / 10))}`,
            },
          ];
    });
  const rate = (b: { calls: number; errors: number }) => (b.calls ? (b.errors / b.calls) * 100 : 0);
  return (
    <>
      <dl class="facts stats-totals">
        <dt>Calls</dt>
        <dd data-field="calls">{totals.calls}</dd>
        <dt>Errors</dt>
        <dd data-field="errors">
          {totals.errors}
          {totals.toolErrors ? ` (${totals.toolErrors} tool errors)` : ""}
        </dd>
        <dt>Error rate</dt>
        <dd data-field="errorRate">{`${(totals.errorRate * 100).toFixed(1)} %`}</dd>
        <dt>p50</dt>
        <dd data-field="p50">{ms(totals.p50Ms)}</dd>
        <dt>p95</dt>
        <dd data-field="p95">{ms(totals.p95Ms)}</dd>
      </dl>
      {stats.partial ? (
        <p class="help">
          Partial: the window holds more events than one answer reads; these figures cover its most recent
          ones.
        </p>
      ) : null}
      {totals.calls === 0 ? (
        <p class="help">No calls in this window.</p>
      ) : (
        <div class="stats-charts">
          <TimeChart
            label={`Calls per ${per}`}
            summary={`${totals.calls} calls, at most ${Math.max(...used.map((b) => b.calls))} per ${per}`}
            from={from}
            to={to}
            unit="calls"
            time={time}
            lines={[{ className: "calls", points: stats.buckets.map((b) => [mid(b.at), b.calls]) }]}
            dots={dots((b) => b.calls, "calls", `# calls`)}
          />
          <TimeChart
            label="Error rate"
            summary={`${totals.errors} of ${totals.calls} calls failed (${(totals.errorRate * 100).toFixed(1)} %)`}
            from={from}
            to={to}
            unit="%"
            top={100}
            time={time}
            dots={dots(rate, "failed", "# % errors").map((dot) =>
              dot.value > 0 ? dot : { ...dot, className: "calls" },
            )}
          />
          <TimeChart
            label="Duration p50 and p95"
            summary={`p50 ${ms(totals.p50Ms)}, p95 ${ms(totals.p95Ms)} over the window`}
            legend={[
              { className: "p50", label: "p50" },
              { className: "p95", label: "p95" },
            ]}
            from={from}
            to={to}
            unit="ms"
            time={time}
            dots={[...dots((b) => b.p95Ms, "p95", "p95 # ms"), ...dots((b) => b.p50Ms, "p50", "p50 # ms")]}
          />
        </div>
      )}
    </>
  );
}
