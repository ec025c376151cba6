/**
 * The AWS calls a store makes, counted as they are sent: an SDK middleware on the store's own
 * DynamoDB, SQS and KMS clients (instrumentation of the real clients talking to the emulator, never a
 * mock). For suites that bound what an operation costs, and for `npm run bench -- scale`.
 */
import { randomUUID } from "node:crypto";
import type { InitializeMiddleware, MetadataBearer, MiddlewareStack } from "@aws-sdk/types";
import type { AwsClients } from "@mcpgw/aws";

export type AwsService = "dynamodb" | "sqs" | "kms";

/** One call: its service, its command without the `Command` suffix (`Query`, `Decrypt`) and input. */
export interface AwsCall {
  service: AwsService;
  command: string;
  input: Record<string, unknown>;
  at: number;
}

/** One item a call wrote (put, update or delete; in a transaction or batch too), by its key. */
export interface ItemWrite {
  command: string;
  pk: string;
  sk: string;
}

export interface AwsCallLog {
  /** The calls since the start or the last {@link AwsCallLog.reset}, in order. */
  readonly calls: readonly AwsCall[];
  /** How many of them went to `service` (and were `command`); all of them without either. */
  count(service?: AwsService, command?: string): number;
  /** Every item they wrote, item by item (a transaction of three writes is three). */
  writes(): ItemWrite[];
  /** Their count by `service:Command`, e.g. `{ "dynamodb:Query": 10 }`. */
  summary(): Record<string, number>;
  reset(): void;
  /** Takes the middleware off the clients. */
  stop(): void;
}

/** Starts counting the calls of `clients` (e.g. `store.clients` of an AWS store). */
export function recordAwsCalls(clients: AwsClients): AwsCallLog {
  let calls: AwsCall[] = [];
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
      return next(args);
    };
    const stack = client.middlewareStack as unknown as MiddlewareStack<object, MetadataBearer>;
    stack.add(record, { step: "initialize", name });
    stacks.push(stack);
  }
  return {
    get calls() {
      return calls;
    },
    count: (service, command) =>
      calls.filter((call) => (!service || call.service === service) && (!command || call.command === command))
        .length,
    writes: () => calls.filter((call) => call.service === "dynamodb").flatMap(itemWrites),
    summary() {
      const counts: Record<string, number> = {};
      for (const call of calls)
        counts[`${call.service}:${call.command}`] = (counts[`${call.service}:${call.command}`] ?? 0) + 1;
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

type Json = Record<string, unknown>;

/** The items a DynamoDB call writes (document-client input: plain values, or marshalled `{ S: … }`). */
function itemWrites({ command, input }: AwsCall): ItemWrite[] {
  const write = (key: unknown): ItemWrite => {
    const { pk, sk } = (key ?? {}) as Json;
    return { command, pk: plain(pk), sk: plain(sk) };
  };
  switch (command) {
    case "PutItem":
      return [write(input.Item)];
    case "UpdateItem":
    case "DeleteItem":
      return [write(input.Key)];
    case "TransactWriteItems":
      return ((input.TransactItems ?? []) as Json[]).flatMap((item) => {
        const { Put, Update, Delete } = item as { Put?: Json; Update?: Json; Delete?: Json };
        if (Put) return [write(Put.Item)];
        if (Update) return [write(Update.Key)];
        if (Delete) return [write(Delete.Key)];
        return []; // a ConditionCheck writes nothing
      });
    case "BatchWriteItem":
      return Object.values((input.RequestItems ?? {}) as Record<string, Json[]>).flatMap((requests) =>
        requests.map((request) => {
          const { PutRequest, DeleteRequest } = request as { PutRequest?: Json; DeleteRequest?: Json };
          return write(PutRequest ? PutRequest.Item : DeleteRequest?.Key);
        }),
      );
    default:
      return [];
  }
}

function plain(value: unknown): string {
  if (value && typeof value === "object" && "S" in value) return String((value as { S: unknown }).S);
  return String(value);
}
