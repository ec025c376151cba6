/**
 * The health sweep's runs, one at a time across every scheduler (the cron, a dev timer, a second
 * process): a run begins only where the last one's record is as read and no longer holds. A run holds
 * while it works (up to a crash bound), then until its last job is due, so a run never starts while
 * the jobs of the one before are still to come.
 *
 * Item: `SWEEP` / `RUN` — the last run's token, when it began, until when it holds, the jobs it sent.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionalWrite } from "./dynamo";
import { keys } from "./table";

/** The last sweep run as recorded. */
export interface SweepRun {
  token: string;
  /** Epoch ms it began. */
  startedAt: number;
  /** Epoch ms until which it holds: no run begins before. */
  holdsUntil: number;
  /** Probes, checks and repairs it sent (0 while it works). */
  jobs: number;
}

/**
 * True when `run` holds at `now`: its hold not yet past, and not further out than `maxHoldMs`, which no
 * run asks for (a writer's clock far ahead, a record written by hand holds nothing).
 */
export function holdsAt(run: SweepRun | undefined, now: number, maxHoldMs: number): boolean {
  return run !== undefined && run.holdsUntil > now && run.holdsUntil <= now + maxHoldMs;
}

/** The record that keeps sweep runs from overlapping. */
export interface SweepRuns {
  /** The last run, if any (a strongly consistent read). */
  last(): Promise<SweepRun | undefined>;
  /**
   * Records `run` as begun when the last run is still `last` (as read; none: no run yet) and no longer
   * holds at `run.startedAt` — or holds further out than `maxHoldMs`, which no run asks for (a
   * writer's clock far ahead): true when it did; false when another scheduler began one meanwhile.
   */
  begin(run: SweepRun, last: SweepRun | undefined, maxHoldMs: number): Promise<boolean>;
  /**
   * Ends run `token`: it holds until `holdsUntil` (its last job's due time), having sent `jobs`. False
   * when `token` is no longer the last run (it outran its hold and another began).
   */
  end(token: string, holdsUntil: number, jobs: number): Promise<boolean>;
}

const KEY = keys.sweepRun;

/** The sweep's runs in the table (see the module's doc for its item). */
export function createSweepRuns(ddb: DynamoDBDocumentClient, tableName: string): SweepRuns {
  return {
    async last() {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: KEY, ConsistentRead: true }),
      );
      if (!Item) return undefined;
      const { token, startedAt, holdsUntil, jobs } = Item;
      return { token, startedAt, holdsUntil, jobs } as SweepRun;
    },
    begin(run, last, maxHoldMs) {
      return conditionalWrite(() =>
        ddb.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...KEY, ...run },
            ...(last
              ? {
                  ConditionExpression: "#token = :last AND (holdsUntil <= :now OR holdsUntil > :absurd)",
                  ExpressionAttributeNames: { "#token": "token" },
                  ExpressionAttributeValues: {
                    ":last": last.token,
                    ":now": run.startedAt,
                    ":absurd": run.startedAt + maxHoldMs,
                  },
                }
              : { ConditionExpression: "attribute_not_exists(pk)" }),
          }),
        ),
      );
    },
    end(token, holdsUntil, jobs) {
      return conditionalWrite(() =>
        ddb.send(
          new UpdateCommand({
            TableName: tableName,
            Key: KEY,
            UpdateExpression: "SET holdsUntil = :until, jobs = :jobs",
            ConditionExpression: "#token = :token",
            ExpressionAttributeNames: { "#token": "token" },
            ExpressionAttributeValues: { ":until": holdsUntil, ":jobs": jobs, ":token": token },
          }),
        ),
      );
    },
  };
}
