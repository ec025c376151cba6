import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { TABLE_KEYS } from "./table";

/** A stored console session: its expiry and what it is bound to (never a secret itself). */
export interface ConsoleSessionRecord {
  expiresAt: Date;
  /** What let the session in (a fingerprint: see the API's console/session.ts). */
  binding: string;
  /** The provider's subject of the person signed in (provider sign-in only), for the audit trail. */
  sub?: string | undefined;
}

/**
 * Admin console sessions, by the SHA-256 of their cookie value: the cookie is the only copy of the
 * secret. A session lives until its expiry, its sign-out or the next signing-out of everyone
 * ({@link ConsoleSessionStore.endAll}), whichever comes first.
 */
export interface ConsoleSessionStore {
  create(hash: string, session: ConsoleSessionRecord): Promise<void>;
  /** The session; undefined when it does not exist, ended, expired or was signed out with everyone. */
  find(hash: string, now?: Date): Promise<ConsoleSessionRecord | undefined>;
  /** Ends the session (signing out); ending one that is gone is not an error. */
  delete(hash: string): Promise<void>;
  /** Signs everyone out: every session created before this call ends. */
  endAll(): Promise<void>;
}

const key = (hash: string) => ({ pk: `CONSOLE#${hash}`, sk: "SESSION" });
/** The sign-out generation: a session is live only while the generation it was made in is current. */
const GENERATION = { pk: "CONSOLE#ALL", sk: "GENERATION" };

export function createConsoleSessionStore(
  ddb: DynamoDBDocumentClient,
  tableName: string,
): ConsoleSessionStore {
  // Strongly consistent: a session just created (the sign-in's answer) is usable at once, and a
  // signing-out of everyone holds at once everywhere.
  const get = async (itemKey: { pk: string; sk: string }) =>
    (await ddb.send(new GetCommand({ TableName: tableName, Key: itemKey, ConsistentRead: true }))).Item;
  const generation = async () => Number((await get(GENERATION))?.generation ?? 0);

  return {
    async create(hash, { expiresAt, binding, sub }) {
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...key(hash),
            binding,
            ...(sub ? { sub } : {}),
            generation: await generation(),
            // The table's TTL attribute (epoch seconds): expired sessions are removed by the table itself.
            [TABLE_KEYS.ttl]: Math.ceil(expiresAt.getTime() / 1000),
          },
        }),
      );
    },

    async find(hash, now = new Date()) {
      const [item, current] = await Promise.all([get(key(hash)), generation()]);
      const seconds = item?.[TABLE_KEYS.ttl];
      if (!item || typeof seconds !== "number" || typeof item.binding !== "string") return undefined;
      if (item.generation !== current) return undefined;
      const expiresAt = liveUntil(new Date(seconds * 1000), now);
      const sub = typeof item.sub === "string" ? { sub: item.sub } : {};
      return expiresAt && { expiresAt, binding: item.binding, ...sub };
    },

    async delete(hash) {
      await ddb.send(new DeleteCommand({ TableName: tableName, Key: key(hash) }));
    },

    async endAll() {
      await ddb.send(
        new UpdateCommand({
          TableName: tableName,
          Key: GENERATION,
          UpdateExpression: "ADD generation :one",
          ExpressionAttributeValues: { ":one": 1 },
        }),
      );
    },
  };
}

/** The expiry of a stored session that is still live at `now` (the table's TTL removes it only later). */
export function liveUntil(expiresAt: Date | undefined, now: Date): Date | undefined {
  return expiresAt && expiresAt.getTime() > now.getTime() ? expiresAt : undefined;
}
