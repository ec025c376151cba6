/**
 * What the benchmarks share: starting the dev stack, stopping what they started, timing calls, waiting,
 * and printing tables.
 */
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { AwsStore } from "@mcpgw/aws";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freePort, startTsProcess } from "./processes";

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
