/**
 * The AWS calls a store makes, counted as they are sent: an SDK middleware on the store's own
 * DynamoDB, SQS and KMS clients (instrumentation of the real clients talking to the emulator, never a
 * mock). For suites that bound what an operation costs (the benches, whose stack runs in a process of
 * its own, count on the wire instead: scripts/lib/aws-counter.ts).
 */
import { randomUUID } from "node:crypto";
import type { InitializeMiddleware, MetadataBearer, MiddlewareStack } from "@aws-sdk/types";
import type { AwsClients, AwsService } from "@mcpgw/aws";
import { type ItemWrite, itemWrites } from "../../scripts/lib/item-writes";

export type { AwsService, ItemWrite };

/** One call: its service, its command without the `Command` suffix (`Query`, `Decrypt`) and input. */
export interface AwsCall {
  service: AwsService;
  command: string;
  input: Record<string, unknown>;
  at: number;
}

export interface AwsCallLog {
  /** The calls since the start or the last {@link AwsCallLog.reset}, in order. */
  readonly calls: readonly AwsCall[];
  /** Calls to `service` (every service without one) sent and not yet answered, reset or not since. */
  inFlight(service?: AwsService): number;
  /** How many of them went to `service` (and were `command`); all of them without either. */
  count(service?: AwsService, command?: string): number;
  /** Every item they wrote, item by item (a transaction of three writes is three). */
  writes(): ItemWrite[];
  /**
   * Their count by `service:Command`, e.g. `{ "dynamodb:Query": 10 }`, each name followed by what
   * `detail` says of the call, if anything (`dynamodb:Query SERVER#…`).
   */
  summary(detail?: (call: AwsCall) => string): Record<string, number>;
  reset(): void;
  /** Takes the middleware off the clients. */
  stop(): void;
}

/** Starts counting the calls of `clients` (e.g. `store.clients` of an AWS store). */
export function recordAwsCalls(clients: AwsClients): AwsCallLog {
  let calls: AwsCall[] = [];
  const inFlight: Record<AwsService, number> = { dynamodb: 0, sqs: 0, kms: 0 };
  const name = `recordAwsCalls-${randomUUID()}`;
  const stacks: Array<MiddlewareStack<object, MetadataBearer>> = [];
  for (const [service, client] of [
    ["dynamodb", clients.ddb],
    ["sqs", clients.sqs],
    ["kms", clients.kms],
  ] as const) {
    const record: InitializeMiddleware<object, MetadataBearer> = (next, context) => (args) => {
      const command = String(context.commandName).replace(/Command$/, "");
      calls.push({ service, command, input: (args.input ?? {}) as Record<string, unknown>, at: Date.now() });
      inFlight[service]++;
      return next(args).finally(() => {
        inFlight[service]--;
      });
    };
    const stack = client.middlewareStack as unknown as MiddlewareStack<object, MetadataBearer>;
    stack.add(record, { step: "initialize", name });
    stacks.push(stack);
  }
  return {
    get calls() {
      return calls;
    },
    inFlight: (service) =>
      service ? inFlight[service] : Object.values(inFlight).reduce((sum, count) => sum + count, 0),
    count: (service, command) =>
      calls.filter((call) => (!service || call.service === service) && (!command || call.command === command))
        .length,
    writes: () =>
      calls
        .filter((call) => call.service === "dynamodb")
        .flatMap((call) => itemWrites(call.command, call.input)),
    summary(detail) {
      const counts: Record<string, number> = {};
      for (const call of calls) {
        const more = detail?.(call);
        const name = `${call.service}:${call.command}${more ? ` ${more}` : ""}`;
        counts[name] = (counts[name] ?? 0) + 1;
      }
      return counts;
    },
    reset() {
      calls = [];
    },
    stop() {
      for (const stack of stacks) stack.remove(name);
    },
  };
}
