/**
 * The fleet of stdio runners in the table: each runner's registration (renewed by its heartbeat) and
 * each instance's lease, which names its one owner. A lease has no expiry of its own: it holds while
 * its owner's registration is alive, so a steady fleet writes one heartbeat per runner and interval
 * and no lease at all. A lease is taken over only in one transaction with a check that its owner's
 * registration has lapsed (and that the taker's own is alive), so two live runners never hold one.
 *
 * Items: `RUNNERS` / `RUNNER#<id>` (expiring by TTL an hour after its last heartbeat);
 * `LEASE#<placement key>` / `LEASE`, on the byKind index as `LEASES#<owner>` (its owner's leases).
 */
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from "@aws-sdk/lib-dynamodb";
import { conditionalWrite, failedConditions, queryAll, queryKind } from "./dynamo";
import { TABLE_KEYS } from "./table";

/** A runner as it registers itself. */
export interface RunnerRegistration {
  id: string;
  /** Where the gateway and the worker reach its face. */
  url: string;
  /** The most children it runs. */
  capacity: number;
  /** How many more it takes now (capacity less its children). */
  free: number;
  /** Its build, for a rolling deploy's view. */
  version: string;
  /** Epoch ms until which it counts as alive (its heartbeat pushes it on). */
  aliveUntil: number;
  /** Draining: it takes no new instance, and hands its idle ones back. */
  draining: boolean;
}

/** An instance's lease: its placement key, its owner, and how many times it changed hands. */
export interface InstanceLease {
  key: string;
  owner: string;
  version: number;
}

/**
 * What a claim got: the lease (`taken`: written now; else the claimer held it already), the live runner
 * holding it, or nothing (the claimer is not alive, or draining).
 */
export type ClaimOutcome =
  | { lease: InstanceLease; taken: boolean }
  | { holder: RunnerRegistration }
  | { notAlive: true };

/** The runners' registry and the instances' leases. */
export interface RunnerFleet {
  /** Registers `runner`, or renews its registration (its heartbeat). */
  announce(runner: RunnerRegistration): Promise<void>;
  /** Removes a runner's registration (it stopped; its leases are free at once). */
  withdraw(runnerId: string): Promise<void>;
  /** Every registered runner, alive or lapsed (compare `aliveUntil` with the time). */
  runners(): Promise<RunnerRegistration[]>;
  /** The lease on `key`, if any (a strongly consistent read). */
  lease(key: string): Promise<InstanceLease | undefined>;
  /**
   * Takes `key` for `runnerId` — when nobody holds it, when it already does, or when its holder's
   * registration has lapsed by `now` — provided `runnerId`'s own is alive and not draining.
   */
  claim(key: string, runnerId: string, now: number): Promise<ClaimOutcome>;
  /**
   * Gives `key` up when `runnerId` holds it (at `version`, when given: a lease taken again since is
   * not this release's): true when it did.
   */
  release(key: string, runnerId: string, version?: number): Promise<boolean>;
  /** The leases `runnerId` holds. */
  leasesOf(runnerId: string): Promise<InstanceLease[]>;
  /**
   * Deletes the leases of runners whose registration has lapsed by `now` (each only while its owner is
   * still lapsed, at the version read), so a crashed runner's leases do not outlive it. Returns how many.
   */
  reap(now: number): Promise<number>;
}

/** Whether `runner` counts as alive at `now`. */
export function isAlive(runner: Pick<RunnerRegistration, "aliveUntil"> | undefined, now: number): boolean {
  return runner !== undefined && runner.aliveUntil > now;
}

/** How long after its last heartbeat a registration stays in the table (for the record; TTL). */
const REGISTRATION_KEPT_SECONDS = 3_600;

const runnerKey = (id: string) => ({ pk: "RUNNERS", sk: `RUNNER#${id}` });
const leaseKey = (key: string) => ({ pk: `LEASE#${key}`, sk: "LEASE" });
const ownerKind = (owner: string) => `LEASES#${owner}`;

/** Tries of a claim that lost a race (another claimer wrote between its read and its write). */
const CLAIM_TRIES = 8;

/** The fleet in the table (see the module's doc for its items). */
export function createRunnerFleet(ddb: DynamoDBDocumentClient, tableName: string): RunnerFleet {
  const get = async (key: { pk: string; sk: string }) =>
    (await ddb.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
  /** The claimer's own registration is alive at `now` and not draining. */
  const aliveAndTaking = (runnerId: string, now: number) => ({
    ConditionCheck: {
      TableName: tableName,
      Key: runnerKey(runnerId),
      ConditionExpression: "aliveUntil > :now AND draining = :no",
      ExpressionAttributeValues: { ":now": now, ":no": false },
    },
  });
  /** `owner`'s registration is gone or lapsed at `now`. */
  const lapsed = (owner: string, now: number) => ({
    ConditionCheck: {
      TableName: tableName,
      Key: runnerKey(owner),
      ConditionExpression: "attribute_not_exists(pk) OR aliveUntil <= :now",
      ExpressionAttributeValues: { ":now": now },
    },
  });
  const leaseItem = (key: string, owner: string, version: number) => ({
    ...leaseKey(key),
    [TABLE_KEYS.kind]: ownerKind(owner),
    [TABLE_KEYS.kindSort]: key,
    key,
    owner,
    version,
  });

  const fleet: RunnerFleet = {
    async announce(runner) {
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...runnerKey(runner.id),
            ...runner,
            [TABLE_KEYS.ttl]: Math.floor(runner.aliveUntil / 1000) + REGISTRATION_KEPT_SECONDS,
          },
        }),
      );
    },

    async withdraw(runnerId) {
      await ddb.send(new DeleteCommand({ TableName: tableName, Key: runnerKey(runnerId) }));
    },

    async runners() {
      const items = await queryAll(ddb, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": "RUNNERS" },
        ConsistentRead: true,
      });
      return items.map(registrationOf);
    },

    async lease(key) {
      const item = await get(leaseKey(key));
      return item ? leaseOf(item) : undefined;
    },

    async claim(key, runnerId, now) {
      for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
        const item = await get(leaseKey(key));
        const held = item ? leaseOf(item) : undefined;
        if (held?.owner === runnerId) {
          // Its own lease, but only while its registration is alive: a lapsed one may be taken over.
          const me = await get(runnerKey(runnerId));
          return me && isAlive(registrationOf(me), now) ? { lease: held, taken: false } : { notAlive: true };
        }
        if (held) {
          const holder = await get(runnerKey(held.owner));
          if (holder && isAlive(registrationOf(holder), now)) return { holder: registrationOf(holder) };
        }
        // Never a version a deleted lease had: a late release of that one cannot remove this one.
        const lease = { key, owner: runnerId, version: Math.max((held?.version ?? 0) + 1, now) };
        const items = [
          aliveAndTaking(runnerId, now),
          ...(held ? [lapsed(held.owner, now)] : []),
          {
            Put: {
              TableName: tableName,
              Item: leaseItem(key, runnerId, lease.version),
              ConditionExpression: held
                ? "#owner = :owner AND #version = :version"
                : "attribute_not_exists(pk)",
              ...(held
                ? {
                    ExpressionAttributeNames: { "#owner": "owner", "#version": "version" },
                    ExpressionAttributeValues: { ":owner": held.owner, ":version": held.version },
                  }
                : {}),
            },
          },
        ];
        try {
          await ddb.send(new TransactWriteCommand({ TransactItems: items }));
          return { lease, taken: true };
        } catch (error) {
          const failed = failedConditions(error);
          if (failed.includes(0)) return { notAlive: true };
          // Another transaction on one of these items at the same time (DynamoDB cancels both): again.
          if (failed.length === 0 && !transactionConflict(error)) throw error;
          if (failed.length === 0)
            await new Promise((r) => setTimeout(r, (20 + Math.random() * 30) * 2 ** Math.min(attempt, 5)));
          // The holder came back, or another claimer was first: read again.
        }
      }
      throw new Error(`the lease of ${key} kept changing hands while it was claimed`);
    },

    release(key, runnerId, version) {
      return conditionalWrite(() =>
        ddb.send(
          new DeleteCommand({
            TableName: tableName,
            Key: leaseKey(key),
            ConditionExpression:
              version === undefined ? "#owner = :owner" : "#owner = :owner AND #version = :version",
            ExpressionAttributeNames: {
              "#owner": "owner",
              ...(version === undefined ? {} : { "#version": "version" }),
            },
            ExpressionAttributeValues: {
              ":owner": runnerId,
              ...(version === undefined ? {} : { ":version": version }),
            },
          }),
        ),
      );
    },

    async leasesOf(runnerId) {
      return (await queryKind(ddb, tableName, ownerKind(runnerId))).map(leaseOf);
    },

    async reap(now) {
      let reaped = 0;
      for (const runner of await fleet.runners()) {
        if (isAlive(runner, now)) continue;
        for (const held of await fleet.leasesOf(runner.id)) {
          const deleteIfUnchanged = {
            Delete: {
              TableName: tableName,
              Key: leaseKey(held.key),
              ConditionExpression: "#owner = :owner AND #version = :version",
              ExpressionAttributeNames: { "#owner": "owner", "#version": "version" },
              ExpressionAttributeValues: { ":owner": held.owner, ":version": held.version },
            },
          };
          try {
            await ddb.send(
              new TransactWriteCommand({ TransactItems: [lapsed(held.owner, now), deleteIfUnchanged] }),
            );
            reaped++;
          } catch (error) {
            // Its owner came back, or the lease moved on meanwhile (or another reaper raced): leave it.
            if (failedConditions(error).length === 0 && !transactionConflict(error)) throw error;
          }
        }
      }
      return reaped;
    },
  };
  return fleet;
}

/** A transaction DynamoDB cancelled for another one on the same items (not a condition that failed). */
function transactionConflict(error: unknown): boolean {
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return (
    (error as { name?: unknown }).name === "TransactionConflictException" ||
    reasons.some((reason) => reason.Code === "TransactionConflict")
  );
}

function registrationOf(item: Record<string, unknown>): RunnerRegistration {
  return {
    id: String(item.id),
    url: String(item.url),
    capacity: Number(item.capacity),
    free: Number(item.free),
    version: String(item.version),
    aliveUntil: Number(item.aliveUntil),
    draining: item.draining === true,
  };
}

function leaseOf(item: Record<string, unknown>): InstanceLease {
  return { key: String(item.key), owner: String(item.owner), version: Number(item.version) };
}
