/**
 * Charts over time as SVG: {@link TimeChart} draws dots (and lines) of values against time with a text
 * summary beside it (the chart is not the only way to read it); {@link LatencyChart} is a server's
 * recent latency on it — probes and call batches, failures marked.
 */

import type { LatencyPoint } from "./types";

const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 44, right: 8, top: 8, bottom: 22 };
/** About how wide a character of the axis labels (10px) is, in the chart's units. */
export const LABEL_CHAR = 6.2;

/** Where the plot starts: room for the longest value label (right-aligned 4 units left of the axis). */
export function plotLeft(longestLabel: string): number {
  return Math.max(PAD.left, Math.ceil(8 + longestLabel.length * LABEL_CHAR));
}

/** The value axis's top: the least of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10ⁿ at or above `value` (so its labels read round). */
export function roundTop(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * power >= value * (1 - 1e-9)) ?? 10;
  return step * power;
}

/** One entry of a chart's legend: the dot class it shows, and what it means. */
export interface LegendEntry {
  className: string;
  label: string;
}

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
 * Values against time from `from` to `to`, the value axis from 0 to `top` (default: a round value at
 * or above the largest) in `unit`, labelled at 0, half and top with room for the longest label;
 * `label` names the chart, `summary` says what it shows in words, `legend` what each kind of dot is.
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
  legend?: LegendEntry[];
}) {
  const { from, to, unit } = props;
  const values = [
    ...props.dots.map((dot) => dot.value),
    ...(props.lines ?? []).flatMap((line) => line.points.map(([, v]) => v)),
  ];
  const top = props.top ?? roundTop(Math.max(1, ...values));
  const label = (value: number) => `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
  const left = plotLeft(label(top));
  const time = props.time ?? ((at: number) => new Date(at).toLocaleTimeString());
  const x = (t: number) => left + ((t - from) / Math.max(1, to - from)) * (WIDTH - left - PAD.right);
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
          d={`M${left},${PAD.top} V${HEIGHT - PAD.bottom} H${WIDTH - PAD.right}`}
          fill="none"
        />
        <path class="grid" d={`M${left},${y(top / 2)} H${WIDTH - PAD.right}`} fill="none" />
        {[top, top / 2].map((value) => (
          <text key={value} x={left - 4} y={y(value) + 3} text-anchor="end">
            {label(value)}
          </text>
        ))}
        <text x={left - 4} y={HEIGHT - PAD.bottom} text-anchor="end">
          0
        </text>
        <text x={left} y={HEIGHT - 6}>
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
      <figcaption class="help">
        {props.legend?.length ? (
          <ul class="chart-legend">
            {props.legend.map((entry) => (
              <li key={entry.className}>
                <svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">
                  <circle class={entry.className} cx="5" cy="5" r="4" />
                </svg>
                {entry.label}
              </li>
            ))}
          </ul>
        ) : null}
        {props.summary}
      </figcaption>
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
      legend={[
        { className: "probe", label: "probe (a check of the server)" },
        { className: "calls", label: "calls (a 10 s slot: its median call)" },
        { className: "failed", label: "failed" },
      ]}
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
