/**
 * Charts over time as SVG: {@link TimeChart} draws dots (and lines) of values against time with a text
 * summary beside it (the chart is not the only way to read it); {@link LatencyChart} is a server's
 * recent latency on it — probes and call batches, failures marked.
 */

import type { LatencyPoint } from "./types";

const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 44, right: 8, top: 8, bottom: 22 };

/** One dot of a chart: its time (epoch ms), value, CSS class and the words its tooltip says. */
export interface ChartDot {
  key: string;
  at: number;
  value: number;
  className: string;
  r?: number;
  title: string;
}

/** A line through points `[time, value]`, drawn under the dots. */
export interface ChartLine {
  className: string;
  points: Array<[number, number]>;
}

/**
 * Values against time from `from` to `to`, the value axis from 0 to `top` (default: a tenth above the
 * largest) in `unit`; `label` names the chart, `summary` says what it shows in words.
 */
export function TimeChart(props: {
  label: string;
  summary: string;
  from: number;
  to: number;
  unit: string;
  dots: ChartDot[];
  lines?: ChartLine[];
  top?: number;
  time?: (at: number) => string;
}) {
  const { from, to, unit } = props;
  const values = [
    ...props.dots.map((dot) => dot.value),
    ...(props.lines ?? []).flatMap((line) => line.points.map(([, v]) => v)),
  ];
  const top = props.top ?? Math.max(1, ...values) * 1.1;
  const time = props.time ?? ((at: number) => new Date(at).toLocaleTimeString());
  const x = (t: number) => PAD.left + ((t - from) / Math.max(1, to - from)) * (WIDTH - PAD.left - PAD.right);
  const y = (value: number) => HEIGHT - PAD.bottom - (value / top) * (HEIGHT - PAD.top - PAD.bottom);
  return (
    <figure>
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${props.label}: ${props.summary}`}
      >
        <path
          class="axis"
          d={`M${PAD.left},${PAD.top} V${HEIGHT - PAD.bottom} H${WIDTH - PAD.right}`}
          fill="none"
        />
        <text x={PAD.left - 4} y={PAD.top + 8} text-anchor="end">
          {Math.round(top)} {unit}
        </text>
        <text x={PAD.left - 4} y={HEIGHT - PAD.bottom} text-anchor="end">
          0
        </text>
        <text x={PAD.left} y={HEIGHT - 6}>
          {time(from)}
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 6} text-anchor="end">
          {time(to)}
        </text>
        {(props.lines ?? []).map((line) => (
          <polyline
            key={line.className}
            class={`line ${line.className}`}
            fill="none"
            points={line.points.map(([t, v]) => `${x(t)},${y(v)}`).join(" ")}
          />
        ))}
        {props.dots.map((dot) => (
          <circle key={dot.key} class={dot.className} cx={x(dot.at)} cy={y(dot.value)} r={dot.r ?? 3}>
            <title>{dot.title}</title>
          </circle>
        ))}
      </svg>
      <figcaption class="help">{props.summary}</figcaption>
    </figure>
  );
}

export function LatencyChart({ points }: { points: LatencyPoint[] }) {
  if (points.length === 0) {
    return (
      <p class="help">No probes or calls recorded yet: points appear as the server is checked and used.</p>
    );
  }
  const times = points.map((point) => Date.parse(point.at));
  // At least the last 20 minutes (the calls' window): a lone point sits at its time, not at an edge.
  const t1 = Math.max(...times, Date.now());
  const t0 = Math.min(...times, t1 - 20 * 60_000);
  const probes = points.filter((point) => point.kind === "probe");
  const calls = points.filter((point) => point.kind === "calls");
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const summary = [
    probes.length
      ? `${probes.length} probes, median ${Math.round(median(probes.map((p) => p.ms)) ?? 0)} ms`
      : "",
    calls.length
      ? `${calls.reduce((sum, p) => sum + (p.count ?? 1), 0)} calls, median ${Math.round(median(calls.map((p) => p.ms)) ?? 0)} ms`
      : "",
    `${points.filter((p) => !p.ok).length} failed`,
  ]
    .filter(Boolean)
    .join(" · ");
  return (
    <TimeChart
      label="Latency history"
      summary={summary}
      from={t0}
      to={t1}
      unit="ms"
      dots={points.map((point) => ({
        key: `${point.kind}-${point.at}`,
        at: Date.parse(point.at),
        value: point.ms,
        className: point.ok ? point.kind : "failed",
        r: point.kind === "calls" ? 4 : 3,
        title: `${point.kind === "probe" ? "Probe" : `${point.count ?? 1} calls`} at ${new Date(point.at).toLocaleTimeString()}: ${Math.round(point.ms)} ms${point.ok ? "" : " (failed)"}`,
      }))}
    />
  );
}
