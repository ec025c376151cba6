import { AppError } from "@mcpgw/core";
import { ADMIN_OWNER, type ThreadInstance, type ThreadRegistry } from "../threads";
import { byKey, copy, type MemoryTables, type MemoryThread } from "./tables";

/**
 * Thread registrations in memory with the DynamoDB registry's ownership rule: the first registration
 * makes its owner the thread's; a key registering in a thread another owns gets `request.not_found`.
 */
export function createMemoryThreadRegistry(tables: MemoryTables): ThreadRegistry {
  const instancesOf = (thread: MemoryThread): ThreadInstance[] =>
    [...thread.instances.values()].map(copy).sort((a, b) => byKey(a.serverId, b.serverId));

  return {
    async register({ threadId, serverId, worktreeRoot, owner }) {
      const now = new Date().toISOString();
      let thread = tables.threads.get(threadId);
      if (thread && owner !== ADMIN_OWNER && thread.owner !== owner)
        throw new AppError("request.not_found", `No thread '${threadId}'.`, { threadId });
      if (!thread) {
        thread = { owner, createdAt: now, serverIds: new Set(), instances: new Map() };
        tables.threads.set(threadId, thread);
      }
      thread.serverIds.add(serverId);
      const existing = thread.instances.get(serverId);
      if (existing) return { instance: copy(existing), created: false };
      const instance = { threadId, serverId, worktreeRoot, createdAt: now };
      thread.instances.set(serverId, instance);
      return { instance: copy(instance), created: true };
    },

    async get(threadId, serverId) {
      const instance = tables.threads.get(threadId)?.instances.get(serverId);
      return instance ? copy(instance) : undefined;
    },

    async list(threadId) {
      const thread = tables.threads.get(threadId);
      return thread ? instancesOf(thread) : [];
    },

    async thread(threadId) {
      const thread = tables.threads.get(threadId);
      if (!thread) return undefined;
      return { threadId, owner: thread.owner, createdAt: thread.createdAt, instances: instancesOf(thread) };
    },

    async threads(owner) {
      return [...tables.threads]
        .filter(([, thread]) => owner === undefined || thread.owner === owner)
        .sort(([a, x], [b, y]) => byKey(`${x.owner}#${a}`, `${y.owner}#${b}`))
        .map(([threadId, thread]) => ({
          threadId,
          owner: thread.owner,
          createdAt: thread.createdAt,
          serverIds: [...thread.serverIds].sort(),
        }));
    },

    async unregister(threadId, serverId) {
      const thread = tables.threads.get(threadId);
      if (!thread) return;
      thread.instances.delete(serverId);
      thread.serverIds.delete(serverId);
      if (thread.serverIds.size === 0) tables.threads.delete(threadId);
    },

    async removeThread(threadId) {
      const thread = tables.threads.get(threadId);
      if (!thread) return [];
      tables.threads.delete(threadId);
      return instancesOf(thread);
    },
  };
}
