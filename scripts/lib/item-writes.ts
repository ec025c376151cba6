/**
 * The items a DynamoDB write request writes, by key: one reader for the SDK middleware that counts a
 * store's calls in tests (document-client input, plain values) and the counting proxy of the benches
 * (the wire's marshalled `{ S: … }` values).
 */

/** One item a call wrote (put, update or delete; in a transaction or batch too), by its key. */
export interface ItemWrite {
  command: string;
  pk: string;
  sk: string;
}

type Json = Record<string, unknown>;

/** The items `command` (`PutItem`, `TransactWriteItems`…) with `input` writes; none for a read. */
export function itemWrites(command: string, input: Json): ItemWrite[] {
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
