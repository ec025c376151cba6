import { type Sealer, secretContext } from "../sealing";
import type { SecretStore } from "../secrets";
import { byKey, copy, type MemoryTables } from "./tables";

/** The secret store in memory: values sealed under the entry's context, never kept in the clear. */
export function createMemorySecretStore(tables: MemoryTables, sealer: Sealer): SecretStore {
  return {
    async put(name, values) {
      const summary = { name, keys: Object.keys(values).sort(), updatedAt: new Date().toISOString() };
      const sealed = await sealer.seal(values, secretContext(name));
      tables.secrets.set(name, { summary: copy(summary), sealed });
      return summary;
    },

    async list() {
      return [...tables.secrets.values()]
        .map(({ summary }) => copy(summary))
        .sort((a, b) => byKey(a.name, b.name));
    },

    async get(name) {
      const entry = tables.secrets.get(name);
      return entry ? sealer.open<Record<string, string>>(entry.sealed, secretContext(name)) : undefined;
    },

    async remove(name) {
      return tables.secrets.delete(name);
    },
  };
}
