import { createHash } from "node:crypto";
import { ADMIN_OWNER } from "@mcpgw/aws";
import { AppError } from "@mcpgw/core";
import type { Principal } from "../env";
import type { GatewayDeps } from "./deps";
import type { DirectoryEntry } from "./directory";

/** True for a stdio server that runs one instance per thread. */
export function isThreadScoped(entry: DirectoryEntry): boolean {
  return (entry.server as { scope?: string }).scope === "thread";
}

/** The owner a principal's threads are recorded under: `admin`, the key's id, or `user:<sub>`. */
export function threadOwner(principal: Principal): string {
  if (principal.kind === "key") return principal.keyId;
  return principal.kind === "user" ? `user:${principal.sub}` : ADMIN_OWNER;
}

/** The longest thread id a key or user names its own thread by (the admin's refs may be longer: see {@link storedThreadId}). */
export const MAX_OWN_THREAD_ID = 128;

/**
 * Where a principal's threads live in the store and on the runner: `key:<keyId>:`, `user:<sha-256 of
 * the sub, 32 hex>:` (a sub may hold any character), nothing for the admin.
 */
function threadScope(principal: Principal): string {
  if (principal.kind === "key") return `key:${principal.keyId}:`;
  if (principal.kind === "user")
    return `user:${createHash("sha256").update(principal.sub).digest("hex").slice(0, 32)}:`;
  return "";
}

/**
 * The stored id of the thread a principal calls `threadId`: thread ids are scoped to the principal
 * that names them, so a key or user can neither squat nor reach another's (`t1` of key A and `t1` of
 * key B are two threads). The admin's namespace is the whole store: it names another's thread by the
 * stored id it is listed under (`key:<keyId>:t1`).
 */
export function storedThreadId(principal: Principal | undefined, threadId: string): string {
  if (!principal) throw new AppError("request.not_found", `No thread '${threadId}'.`, { threadId });
  if (principal.kind !== "admin" && threadId.length > MAX_OWN_THREAD_ID)
    throw new AppError("request.invalid", `A thread id has at most ${MAX_OWN_THREAD_ID} characters.`);
  return `${threadScope(principal)}${threadId}`;
}

/**
 * How a principal knows stored threads: by its own name for a key or user, by the stored id for the
 * admin (the scope worked out once, for a whole list).
 */
export function shownThreadIds(principal: Principal): (stored: string) => string {
  const scope = threadScope(principal);
  return (stored) => (stored.startsWith(scope) ? stored.slice(scope.length) : stored);
}

/** True when the principal may use a thread of `owner`: the admin every thread, a key or user its own (none without a principal). */
export function mayUseThread(principal: Principal | undefined, owner: string): boolean {
  return principal?.kind === "admin" || (principal !== undefined && threadOwner(principal) === owner);
}

/**
 * The (stored) thread a call to a thread-scoped server runs in: the caller's own (any, for the admin),
 * with an instance of the server. Another key's thread reads as one without that instance: 404 either way.
 */
export async function threadOf(
  deps: GatewayDeps,
  entry: DirectoryEntry,
  thread: string | undefined,
  principal: Principal | undefined,
): Promise<string> {
  if (!thread) {
    throw new AppError(
      "request.invalid",
      `Server '${entry.server.name}' is thread-scoped: pass the \`thread\` to call it in.`,
    );
  }
  const stored = storedThreadId(principal, thread);
  const found = await deps.store.threads.thread(stored);
  if (
    !found ||
    !mayUseThread(principal, found.owner) ||
    !found.instances.some((instance) => instance.serverId === entry.server.id)
  ) {
    throw new AppError(
      "request.not_found",
      `Thread '${thread}' has no instance of '${entry.server.name}'; start one with POST /v1/threads/${thread}/servers/${entry.server.name}.`,
    );
  }
  return stored;
}
