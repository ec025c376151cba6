import { type ApiKeyStore, hashApiKey, newApiKey } from "../keys";
import { copy, type MemoryTables } from "./tables";

/** Client API keys in memory, kept (as in the table) only under their SHA-256 hashes. */
export function createMemoryApiKeyStore(tables: MemoryTables): ApiKeyStore {
  return {
    async create(name, serverIds, options = {}) {
      const { key, info } = newApiKey(name, serverIds, options);
      tables.keys.set(hashApiKey(key), copy(info));
      return { ...info, key };
    },

    async list() {
      return [...tables.keys.values()].map(copy).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
    },

    async byHash() {
      return new Map([...tables.keys].map(([hash, info]) => [hash, copy(info)]));
    },

    async revoke(id) {
      for (const [hash, info] of tables.keys) {
        if (info.id !== id) continue;
        tables.keys.delete(hash);
        return true;
      }
      return false;
    },
  };
}
