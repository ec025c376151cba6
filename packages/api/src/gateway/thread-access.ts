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

/** True when the principal may use a thread of `owner`: the admin every thread, a key or user its own (none without a principal). */
export function mayUseThread(principal: Principal | undefined, owner: string): boolean {
  return principal?.kind === "admin" || (principal !== undefined && threadOwner(principal) === owner);
}

/**
 * The thread a call to a thread-scoped server runs in: the caller's own (any, for the admin), with an
 * instance of the server. Another key's thread reads as one without that instance: 404 either way.
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
  const found = await deps.store.threads.thread(thread);
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
  return thread;
}
