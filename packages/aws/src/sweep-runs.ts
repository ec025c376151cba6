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

/** The record that keeps sweep runs from overlapping. */
export interface SweepRuns {
  /** The last run, if any (a strongly consistent read). */
  last(): Promise<SweepRun | undefined>;
  /**
   * Records `run` as begun when the last run is still `last` (as read; none: no run yet) and no longer
   * holds at `run.startedAt`: true when it did; false when another scheduler began one meanwhile.
   */
  begin(run: SweepRun, last: SweepRun | undefined): Promise<boolean>;
  /** Ends run `token`: it holds until `holdsUntil` (its last job's due time), having sent `jobs`. */
  end(token: string, holdsUntil: number, jobs: number): Promise<void>;
}

const KEY = { pk: "SWEEP", sk: "RUN" };

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
    begin(run, last) {
      return conditionalWrite(() =>
        ddb.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...KEY, ...run },
            ...(last
              ? {
                  ConditionExpression: "#token = :last AND holdsUntil <= :now",
                  ExpressionAttributeNames: { "#token": "token" },
                  ExpressionAttributeValues: { ":last": last.token, ":now": run.startedAt },
                }
              : { ConditionExpression: "attribute_not_exists(pk)" }),
          }),
        ),
      );
    },
    async end(token, holdsUntil, jobs) {
      await conditionalWrite(() =>
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
