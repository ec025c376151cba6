import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { queryAll } from "./dynamo";
import { ownedKind } from "./servers";

/**
 * Per-chat server toggles: a preference that hides one server's tools from one chat (not a security
 * boundary). Only "off" is stored; the item is owned by the server, so deleting the server removes it.
 */
export interface ChatToggles {
  /** Ids of the servers this chat switched off. */
  offServers(chatId: string): Promise<Set<string>>;
  set(chatId: string, serverId: string, enabled: boolean): Promise<void>;
}

const chatPartition = (chatId: string) => `CHAT#${chatId}`;

export function createChatToggles(ddb: DynamoDBDocumentClient, tableName: string): ChatToggles {
  return {
    async offServers(chatId) {
      const items = await queryAll(ddb, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": chatPartition(chatId) },
      });
      return new Set(items.map((item) => String(item.serverId)));
    },

    async set(chatId, serverId, enabled) {
      const key = { pk: chatPartition(chatId), sk: `OFF#${serverId}` };
      if (enabled) {
        await ddb.send(new DeleteCommand({ TableName: tableName, Key: key }));
        return;
      }
      await ddb.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...key,
            kind: ownedKind(serverId),
            kindSort: key.pk,
            chatId,
            serverId,
            updatedAt: new Date().toISOString(),
          },
        }),
      );
    },
  };
}
