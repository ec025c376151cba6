import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { TABLE_KEYS } from "./table";

/**
 * Admin console sessions, by the SHA-256 of their cookie value: the cookie is the only copy of the
 * secret. A session lives until its expiry or its sign-out, whichever comes first.
 */
export interface ConsoleSessionStore {
  create(hash: string, expiresAt: Date): Promise<void>;
  /** When the session expires; undefined when it does not exist, ended or expired. */
  expiresAt(hash: string, now?: Date): Promise<Date | undefined>;
  /** Ends the session (signing out); ending one that is gone is not an error. */
  delete(hash: string): Promise<void>;
}

const key = (hash: string) => ({ pk: `CONSOLE#${hash}`, sk: "SESSION" });

export function createConsoleSessionStore(
  ddb: DynamoDBDocumentClient,
  tableName: string,
): ConsoleSessionStore {
  return {
    async create(hash, expiresAt) {
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...key(hash),
            // The table's TTL attribute (epoch seconds): expired sessions are removed by the table itself.
            [TABLE_KEYS.ttl]: Math.ceil(expiresAt.getTime() / 1000),
          },
        }),
      );
    },

    async expiresAt(hash, now = new Date()) {
      // Strongly consistent: a session just created (the sign-in's answer) is usable at once.
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: key(hash), ConsistentRead: true }),
      );
      const seconds = Item?.[TABLE_KEYS.ttl];
      return liveUntil(typeof seconds === "number" ? new Date(seconds * 1000) : undefined, now);
    },

    async delete(hash) {
      await ddb.send(new DeleteCommand({ TableName: tableName, Key: key(hash) }));
    },
  };
}

/** The expiry of a stored session that is still live at `now` (the table's TTL removes it only later). */
export function liveUntil(expiresAt: Date | undefined, now: Date): Date | undefined {
  return expiresAt && expiresAt.getTime() > now.getTime() ? expiresAt : undefined;
}
