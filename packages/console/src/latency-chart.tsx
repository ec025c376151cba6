/**
 * A server's recent latency as an SVG chart: probes and call batches over time, failures marked,
 * with a text summary beside it (the chart is not the only way to read it).
 */

import type { LatencyPoint } from "./types";

const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 44, right: 8, top: 8, bottom: 22 };

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
  const top = Math.max(1, ...points.map((point) => point.ms)) * 1.1;
  const x = (t: number) => PAD.left + ((t - t0) / Math.max(1, t1 - t0)) * (WIDTH - PAD.left - PAD.right);
  const y = (ms: number) => HEIGHT - PAD.bottom - (ms / top) * (HEIGHT - PAD.top - PAD.bottom);
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
    <figure>
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`Latency history: ${summary}`}
      >
        <path
          class="axis"
          d={`M${PAD.left},${PAD.top} V${HEIGHT - PAD.bottom} H${WIDTH - PAD.right}`}
          fill="none"
        />
        <text x={PAD.left - 4} y={PAD.top + 8} text-anchor="end">
          {Math.round(top)} ms
        </text>
        <text x={PAD.left - 4} y={HEIGHT - PAD.bottom} text-anchor="end">
          0
        </text>
        <text x={PAD.left} y={HEIGHT - 6}>
          {new Date(t0).toLocaleTimeString()}
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 6} text-anchor="end">
          {new Date(t1).toLocaleTimeString()}
        </text>
        {points.map((point) => (
          <circle
            key={`${point.kind}-${point.at}`}
            class={point.ok ? point.kind : "failed"}
            cx={x(Date.parse(point.at))}
            cy={y(point.ms)}
            r={point.kind === "calls" ? 4 : 3}
          >
            <title>
              {`${point.kind === "probe" ? "Probe" : `${point.count ?? 1} calls`} at ${new Date(point.at).toLocaleTimeString()}: ${Math.round(point.ms)} ms${point.ok ? "" : " (failed)"}`}
            </title>
          </circle>
        ))}
      </svg>
      <figcaption class="help">{summary}</figcaption>
    </figure>
  );
}
