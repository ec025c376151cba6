import { type ConsoleSessionStore, liveUntil } from "../console-sessions";

/** Admin console sessions in memory, with the table's semantics. */
export function createMemoryConsoleSessionStore(): ConsoleSessionStore {
  const sessions = new Map<string, Date>();
  return {
    async create(hash, expiresAt) {
      // Whole seconds, as the table's TTL attribute keeps it.
      sessions.set(hash, new Date(Math.ceil(expiresAt.getTime() / 1000) * 1000));
    },
    async expiresAt(hash, now = new Date()) {
      return liveUntil(sessions.get(hash), now);
    },
    async delete(hash) {
      sessions.delete(hash);
    },
  };
}
