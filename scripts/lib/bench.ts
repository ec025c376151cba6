/**
 * What the benchmarks share: starting the dev stack, stopping what they started, timing calls, waiting,
 * and printing tables.
 */
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { AwsStore } from "@mcpgw/aws";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freePort, percentile, startTsProcess } from "./processes";

/**
 * Things to stop, in reverse order of starting: on success, on a failure, and on SIGINT/SIGTERM.
 * `stopAll` runs them once.
 */
export function stopper(): { stops: Array<() => Promise<unknown>>; stopAll: () => Promise<void> } {
  const stops: Array<() => Promise<unknown>> = [];
  let stopped: Promise<void> | undefined;
  const stopAll = (): Promise<void> => {
    stopped ??= (async () => {
      for (const stop of stops.reverse()) await stop().catch((error) => console.error(error));
    })();
    return stopped;
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void stopAll().finally(() => process.exit(130)));
  }
  return { stops, stopAll };
}

/** Latencies (ms) of `count` calls made `concurrency` at a time. */
export async function measure(
  call: () => Promise<void>,
  count: number,
  concurrency: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const started = performance.now();
        await call();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

/** Rows as columns: the first left-aligned, the rest right-aligned. */
export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  for (const row of rows) {
    console.log(
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!)))
        .join("  "),
    );
  }
}

/** Resolves once `check` holds; throws after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("bench setup timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True when `store`'s job queue holds nothing: no job visible, in flight or delayed. */
export async function queueDrained(store: Pick<AwsStore, "jobs" | "clients">): Promise<boolean> {
  const { Attributes = {} } = await store.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: await store.jobs.url(),
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  return Object.values(Attributes).every((value) => Number(value) === 0);
}

/**
 * The dev stack (`scripts/dev.ts`: gateway and runner) in its own process on a free port, with tables
 * and queues of its own on the emulator at `awsEndpoint`, admin token `adminToken`, and `env` besides.
 */
export async function startDevGateway(
  awsEndpoint: string,
  adminToken: string,
  env: Record<string, string> = {},
) {
  const port = await freePort();
  const gateway = await startTsProcess("scripts/dev.ts", [], /ready at (\S+) /, {
    PORT: String(port),
    ADMIN_TOKEN: adminToken,
    AWS_ENDPOINT_URL: awsEndpoint,
    TABLE_NAME: `bench-${port}`,
    QUEUE_NAME: `bench-jobs-${port}`,
    DEAD_LETTER_QUEUE_NAME: `bench-dlq-${port}`,
    ...env,
  });
  return { ...gateway, url: gateway.match[1]! };
}

/**
 * An MCP SDK client (v1, as most clients in the field) connected to `url` with `token` as its bearer
 * (none: no authorization header); its close joins `stops`.
 */
export async function connectSdkClient(
  url: string,
  token: string | undefined,
  stops: Array<() => Promise<unknown>>,
): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    }),
  );
  stops.push(() => client.close());
  return client;
}

/** One path of a {@link compareTwoPaths} run: its name and its call. */
export type TimedPath = [name: string, call: () => Promise<unknown>];

/**
 * Two paths of one call, timed from this process in interleaved rounds (their order alternating; the
 * first `warmupRounds` not counted): prints each path's p50/p99 and this process's CPU per call, then
 * the second path's difference from and share of the first's.
 */
export async function compareTwoPaths(options: {
  title: string;
  rounds: number;
  calls: number;
  warmupRounds: number;
  /** What this process's CPU covers (the table's column). */
  cpuLabel: string;
  paths: [TimedPath, TimedPath];
}): Promise<void> {
  const { rounds, calls, warmupRounds, paths } = options;
  const latencies = new Map<string, number[]>(paths.map(([name]) => [name, []]));
  const cpuMs = new Map<string, number>(paths.map(([name]) => [name, 0]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, call] of round % 2 === 0 ? paths : [...paths].reverse()) {
      const times: number[] = [];
      const cpu = process.cpuUsage();
      for (let i = 0; i < calls; i++) {
        const started = performance.now();
        await call();
        times.push(performance.now() - started);
      }
      const used = process.cpuUsage(cpu);
      if (round < warmupRounds) continue;
      latencies.get(name)?.push(...times);
      cpuMs.set(name, (cpuMs.get(name) ?? 0) + (used.user + used.system) / 1000);
    }
  }
  const [first, second] = paths.map(([name]) => {
    const samples = latencies.get(name) ?? [];
    return {
      name,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      cpu: (cpuMs.get(name) ?? 0) / samples.length,
    };
  }) as [Figures, Figures];
  console.log(
    `${options.title}: ${rounds - warmupRounds} rounds × ${calls} calls per path (after ${warmupRounds} warm-up), interleaved`,
  );
  printTable([
    ["path", "p50 ms", "p99 ms", `CPU ms/call (${options.cpuLabel})`],
    ...[first, second].map((f) => [f.name, f.p50.toFixed(3), f.p99.toFixed(3), f.cpu.toFixed(3)]),
  ]);
  console.log(
    `${second.name} vs ${first.name}: p50 ${(second.p50 - first.p50).toFixed(3)} ms (${(second.p50 / first.p50).toFixed(2)}×), CPU per call ${(second.cpu - first.cpu).toFixed(3)} ms (${(second.cpu / first.cpu).toFixed(2)}×)`,
  );
}

interface Figures {
  name: string;
  p50: number;
  p99: number;
  cpu: number;
}
