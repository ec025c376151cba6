import { AppError } from "@mcpgw/core";
import { assertToolsetSize, type StoredToolset, type ToolsetStore } from "../toolsets";
import { copy } from "./tables";

/** Tool sets in memory, by name. */
export function createMemoryToolsetStore(): ToolsetStore {
  const sets = new Map<string, StoredToolset>();
  return {
    async create(set) {
      assertToolsetSize(set);
      if (sets.has(set.name)) throw new AppError("toolset.exists", `A tool set named '${set.name}' exists.`);
      sets.set(set.name, copy(set));
      return copy(set);
    },
    async replace(set) {
      assertToolsetSize(set);
      const existing = sets.get(set.name);
      if (!existing) throw new AppError("toolset.not_found", `No tool set named '${set.name}'.`);
      const replaced = { ...copy(set), createdAt: existing.createdAt };
      sets.set(set.name, replaced);
      return copy(replaced);
    },
    async get(name) {
      const set = sets.get(name);
      return set && copy(set);
    },
    async list() {
      return [...sets.values()].map(copy).sort((a, b) => (a.name < b.name ? -1 : 1));
    },
    async delete(name) {
      return sets.delete(name);
    },
  };
}
