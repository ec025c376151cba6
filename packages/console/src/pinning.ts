/** A server's pinning and pending tool changes, as the console reads and labels them. */
import type { Pinning, Server } from "./types";

/** Each pinning in words (the form's choices, the detail page's fact). */
export const PINNING_LABELS: Record<Pinning, string> = {
  approve: "approve — a changed or new tool waits for an admin",
  auto: "auto — changes are pinned at once",
  off: "off — no pinning",
};

/** A server's pending tool changes (0 when none). */
export function pendingOf(server: Server): number {
  return (server.status as { pendingChanges?: number }).pendingChanges ?? 0;
}

/** A server's effective pinning (as the API shows it; `approve`, the default, when it does not say). */
export function pinningOf(server: Server): Pinning {
  return (server as { pinning?: Pinning }).pinning ?? "approve";
}
