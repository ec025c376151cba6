/**
 * A counting proxy in front of the AWS emulator: every request a stack sends passes through it and is
 * counted by operation (`DynamoDB.Query`, `KMS.Decrypt`, `SQS.SendMessage`…) and, for DynamoDB writes,
 * by the sort key of each item written (`STATUS`, `CATALOG`, `CONFIG`…). Deterministic figures — what
 * an operation costs in AWS calls — for processes the bench does not run in its own (instrumentation
 * of the wire, not a mock: the emulator still answers everything).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { itemWrites } from "./item-writes";

/** What passed through since the last reset. */
export interface AwsCounts {
  /** Requests by operation, e.g. `DynamoDB.Query` → 3. */
  operations: Map<string, number>;
  /** DynamoDB items written (put, update, delete; in transactions and batches too) by sort key. */
  writtenBySortKey: Map<string, number>;
  /** Milliseconds the emulator took to answer, summed by operation (mean = this / the count). */
  latencyMs: Map<string, number>;
}

export interface AwsCounter {
  /** The URL to give the stack as AWS_ENDPOINT_URL. */
  url: string;
  /** The counts since the last reset (a copy). */
  counts(): AwsCounts;
  reset(): void;
  stop(): Promise<void>;
}

const SERVICES: Record<string, string> = {
  DynamoDB_20120810: "DynamoDB",
  TrentService: "KMS",
  AmazonSQS: "SQS",
};

/** One request and its answer, whole: what an observer of the counter sees (bodies as on the wire). */
export interface AwsExchange {
  /** As counted, e.g. `DynamoDB.Query`. */
  operation: string;
  request: Buffer;
  response: Buffer;
  status: number;
}

/**
 * Starts the proxy on 127.0.0.1 in front of `target` (the emulator's endpoint). `observe`, when given,
 * sees every exchange once its answer has been read (what a request read or wrote, its bytes).
 */
export async function startAwsCounter(
  target: string,
  observe?: (exchange: AwsExchange) => void,
): Promise<AwsCounter> {
  const upstream = new URL(target);
  let counts: AwsCounts = empty();
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const operation = count(counts, req.headers["x-amz-target"], body);
      const sent = performance.now();
      res.on("finish", () => add(counts.latencyMs, operation, performance.now() - sent));
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          // The Host the client signed (SigV4 covers it): the emulator requires valid signatures.
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          if (observe) {
            const chunks: Buffer[] = [];
            answer.on("data", (chunk: Buffer) => chunks.push(chunk));
            answer.on("end", () =>
              observe({
                operation,
                request: body,
                response: Buffer.concat(chunks),
                status: answer.statusCode ?? 502,
              }),
            );
          }
          answer.pipe(res);
        },
      );
      forwarded.on("error", () => res.writeHead(502).end());
      forwarded.end(body);
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({
      operations: new Map(counts.operations),
      writtenBySortKey: new Map(counts.writtenBySortKey),
      latencyMs: new Map(counts.latencyMs),
    }),
    reset: () => {
      counts = empty();
    },
    stop: () =>
      new Promise<void>((stopped) => {
        server.closeAllConnections();
        server.close(() => stopped());
      }),
  };
}

/** The number of requests of the operations named (`DynamoDB`, or `DynamoDB.Query`), together. */
export function total(counts: AwsCounts, ...prefixes: string[]): number {
  let sum = 0;
  for (const [operation, n] of counts.operations)
    if (prefixes.some((prefix) => operation === prefix || operation.startsWith(`${prefix}.`))) sum += n;
  return sum;
}

function empty(): AwsCounts {
  return { operations: new Map(), writtenBySortKey: new Map(), latencyMs: new Map() };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => done(Buffer.concat(chunks)));
    req.on("error", () => done(Buffer.concat(chunks)));
  });
}

function add(map: Map<string, number>, key: string, n = 1): void {
  map.set(key, (map.get(key) ?? 0) + n);
}

/**
 * Counts one request: its operation, and for DynamoDB writes the sort key of every item written.
 * Returns the operation's name.
 */
function count(counts: AwsCounts, target: string | string[] | undefined, body: Buffer): string {
  const [service, action] = String(target ?? "").split(".");
  const operation = service && action ? `${SERVICES[service] ?? service}.${action}` : "other";
  add(counts.operations, operation);
  if (service !== "DynamoDB_20120810" || !/^(Put|Update|Delete|TransactWrite|BatchWrite)/.test(action ?? ""))
    return operation;
  try {
    const input = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
    // A catalogue's parts (`CATALOG#2`) count as catalogue writes.
    for (const { sk } of itemWrites(action ?? "", input))
      add(counts.writtenBySortKey, sk.split("#")[0] ?? sk);
  } catch {
    // not JSON: counted, items unknown
  }
  return operation;
}

/** The mean time the emulator took to answer `operation`, in ms (NaN when none was sent). */
export function meanLatencyMs(counts: AwsCounts, operation: string): number {
  return (counts.latencyMs.get(operation) ?? Number.NaN) / (counts.operations.get(operation) ?? Number.NaN);
}
