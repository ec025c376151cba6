import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  paginateQuery,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { TABLE_KEYS } from "./table";

type Item = Record<string, unknown>;

/** Every item a query returns, across all pages. */
export async function queryAll(ddb: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of paginateQuery({ client: ddb }, input)) items.push(...(page.Items ?? []));
  return items;
}

/** Every item of one kind on the byKind index, in kindSort order. */
export function queryKind(ddb: DynamoDBDocumentClient, tableName: string, kind: string): Promise<Item[]> {
  return queryAll(ddb, {
    TableName: tableName,
    IndexName: TABLE_KEYS.byKindIndex,
    KeyConditionExpression: "#kind = :kind",
    ExpressionAttributeNames: { "#kind": TABLE_KEYS.kind },
    ExpressionAttributeValues: { ":kind": kind },
  });
}

/** Items by key, 100 a call (BatchGetItem's bound), retrying unprocessed keys; missing items are left out. */
export async function batchGet(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  itemKeys: Array<{ pk: string; sk: string }>,
): Promise<Item[]> {
  const items: Item[] = [];
  for (let start = 0; start < itemKeys.length; start += 100) {
    let pending: Item[] = itemKeys.slice(start, start + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1_000)));
      const result = await ddb.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending } } }),
      );
      items.push(...(result.Responses?.[tableName] ?? []));
      pending = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
      if (attempt > 8) throw new Error("DynamoDB kept keys unprocessed in a batch read");
    }
  }
  return items;
}

/** Deletes items by key in batches of 25, retrying unprocessed ones. */
export async function deleteAll(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  itemKeys: Array<{ pk: unknown; sk: unknown }>,
): Promise<void> {
  for (let start = 0; start < itemKeys.length; start += 25) {
    let requests = itemKeys
      .slice(start, start + 25)
      .map((key) => ({ DeleteRequest: { Key: { pk: key.pk, sk: key.sk } } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1_000)));
      const result = await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (result.UnprocessedItems?.[tableName] ?? []) as typeof requests;
      if (attempt > 8) throw new Error("DynamoDB kept items unprocessed in a batch delete");
    }
  }
}

/** The index of each transaction item whose condition failed (empty when the error is something else). */
export function failedConditions(error: unknown): number[] {
  if (!(error instanceof TransactionCanceledException)) return [];
  return (error.CancellationReasons ?? []).flatMap((reason, index) =>
    reason.Code === "ConditionalCheckFailed" ? [index] : [],
  );
}

type Put = NonNullable<NonNullable<TransactWriteCommandInput["TransactItems"]>[number]["Put"]>;

/**
 * Puts an item (under its own condition, if any) only while the item at `owner` exists, in one
 * transaction: `written`, or which condition failed — `owner_missing` or `put_refused`.
 */
export async function putWhileExists(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  owner: { pk: string; sk: string },
  put: Omit<Put, "TableName">,
): Promise<"written" | "owner_missing" | "put_refused"> {
  try {
    await ddb.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: { TableName: tableName, Key: owner, ConditionExpression: "attribute_exists(pk)" },
          },
          { Put: { TableName: tableName, ...put } },
        ],
      }),
    );
    return "written";
  } catch (error) {
    const failed = failedConditions(error);
    if (failed.includes(0)) return "owner_missing";
    if (failed.includes(1)) return "put_refused";
    throw error;
  }
}

/** True for a conditional write that lost its condition. */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

/** Makes a conditional write: true when it was made, false when its condition did not hold. */
export async function conditionalWrite(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * A write the store did not make (the table did not answer, a transaction was cancelled for another
 * reason than a condition): nothing changed, and trying again may work. The API answers 503 with a
 * retry hint.
 */
export class StoreError extends Error {
  override readonly name = "StoreError";
}

/** `error` as a StoreError about `what`, unless it already is a user-visible error. */
export function storeFailure(error: unknown, what: string): Error {
  if (error instanceof Error && (error.name === "AppError" || error.name === "StoreError")) return error;
  const reason = error instanceof Error ? error.name : String(error);
  return new StoreError(`${what} was not saved (${reason}); nothing changed`, { cause: error });
}
