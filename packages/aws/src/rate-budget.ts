import { type DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { TABLE_KEYS } from "./table";

/**
 * Callers' call budgets shared by every gateway instance: one counter per caller and minute. An
 * instance leases a slice of a caller's minute and spends it locally, so a call costs no read or write
 * of its own; the slices handed out in one minute add up to at most the caller's limit.
 */
export interface RateBudget {
  /**
   * Takes up to `want` calls from `caller`'s budget of `limit` calls for the minute `window` (minutes
   * since the epoch): how many it got, 0 once the minute's budget is spent.
   */
  lease(caller: string, window: number, want: number, limit: number): Promise<number>;
}

/** What a lease gets of `want` when the minute's counter reads `used` after adding it. */
export function granted(used: number, want: number, limit: number): number {
  return Math.max(0, Math.min(want, limit - (used - want)));
}

/** How long a minute's counter is kept before the table's TTL removes it. */
const COUNTER_TTL_SECONDS = 10 * 60;

/**
 * The budgets in the table: `RATE#<caller>` / `W#<minute>`, one atomic ADD per lease (no condition: the
 * count after the add says how much of this lease fits, so concurrent leases never hand out more than
 * the limit between them).
 */
export function createRateBudget(ddb: DynamoDBDocumentClient, tableName: string): RateBudget {
  return {
    async lease(caller, window, want, limit) {
      const { Attributes } = await ddb.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: `RATE#${caller}`, sk: `W#${window}` },
          UpdateExpression: "ADD #used :want SET #ttl = if_not_exists(#ttl, :ttl)",
          ExpressionAttributeNames: { "#used": "used", "#ttl": TABLE_KEYS.ttl },
          ExpressionAttributeValues: { ":want": want, ":ttl": (window + 1) * 60 + COUNTER_TTL_SECONDS },
          ReturnValues: "UPDATED_NEW",
        }),
      );
      return granted(Number(Attributes?.used ?? want), want, limit);
    },
  };
}
