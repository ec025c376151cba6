import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { queryKind } from "./dynamo";
import { type SealedValue, type Sealer, secretContext } from "./sealing";
import { KINDS, keys } from "./table";

/** A secret-store entry as it may be shown: its name and key names, never values. */
export interface SecretSummary {
  name: string;
  keys: string[];
  updatedAt: string;
}

/** Named flat key/value maps, sealed at rest (what a stdio server's `secretRef` points at). */
export interface SecretStore {
  put(name: string, values: Record<string, string>): Promise<SecretSummary>;
  list(): Promise<SecretSummary[]>;
  /** The values, opened; undefined when there is no such secret. */
  get(name: string): Promise<Record<string, string> | undefined>;
  remove(name: string): Promise<boolean>;
}

export function createSecretStore(
  ddb: DynamoDBDocumentClient,
  tableName: string,
  sealer: Sealer,
): SecretStore {
  return {
    async put(name, values) {
      const summary = { name, keys: Object.keys(values).sort(), updatedAt: new Date().toISOString() };
      const sealed = await sealer.seal(values, secretContext(name));
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...keys.secret(name), kind: KINDS.secret, kindSort: name, ...summary, sealed },
        }),
      );
      return summary;
    },

    async list() {
      const items = await queryKind(ddb, tableName, KINDS.secret);
      return items.map((item) => ({
        name: String(item.name),
        keys: (item.keys as string[] | undefined) ?? [],
        updatedAt: String(item.updatedAt),
      }));
    },

    async get(name) {
      const { Item } = await ddb.send(
        new GetCommand({ TableName: tableName, Key: keys.secret(name), ConsistentRead: true }),
      );
      if (!Item) return undefined;
      return sealer.open<Record<string, string>>(Item.sealed as SealedValue, secretContext(name));
    },

    async remove(name) {
      const { Attributes } = await ddb.send(
        new DeleteCommand({ TableName: tableName, Key: keys.secret(name), ReturnValues: "ALL_OLD" }),
      );
      return Attributes !== undefined;
    },
  };
}
