import { type ConsoleSessionRecord, type ConsoleSessionStore, liveUntil } from "../console-sessions";

/** Admin console sessions in memory, with the table's semantics. */
export function createMemoryConsoleSessionStore(): ConsoleSessionStore {
  const sessions = new Map<string, ConsoleSessionRecord & { generation: number }>();
  let generation = 0;
  return {
    async create(hash, { expiresAt, binding, sub }) {
      // Whole seconds, as the table's TTL attribute keeps it.
      const seconds = new Date(Math.ceil(expiresAt.getTime() / 1000) * 1000);
      sessions.set(hash, { expiresAt: seconds, binding, ...(sub ? { sub } : {}), generation });
    },
    async find(hash, now = new Date()) {
      const session = sessions.get(hash);
      if (!session || session.generation !== generation) return undefined;
      const expiresAt = liveUntil(session.expiresAt, now);
      return (
        expiresAt && { expiresAt, binding: session.binding, ...(session.sub ? { sub: session.sub } : {}) }
      );
    },
    async delete(hash) {
      sessions.delete(hash);
    },
    async endAll() {
      generation++;
    },
  };
}
