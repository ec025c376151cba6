import type { ChatToggles } from "../chats";
import type { MemoryTables } from "./tables";

/** Per-chat server toggles in memory: only "off" is kept, and a server's removal drops its toggles. */
export function createMemoryChatToggles(tables: MemoryTables): ChatToggles {
  return {
    async offServers(chatId) {
      return new Set(tables.chatsOff.get(chatId));
    },

    async set(chatId, serverId, enabled) {
      const off = tables.chatsOff.get(chatId) ?? new Set<string>();
      if (enabled) off.delete(serverId);
      else off.add(serverId);
      tables.chatsOff.set(chatId, off);
    },
  };
}
