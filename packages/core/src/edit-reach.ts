import { isDeepStrictEqual } from "node:util";
import type { ServerSpec } from "./server";

/**
 * Fields that do not change how the upstream is reached or run: an edit of only these applies without
 * a reconnect (name, call timeout, thread scope, per-caller isolation). Every other field — url,
 * headers, auth, command, args, env, secretRef, secretFormat, limits (a running child keeps the limits
 * it started with), enabled, and any field added later unless listed here — reaches the upstream.
 */
export const NON_REACHING_FIELDS = ["name", "timeoutSeconds", "scope", "isolation"] as const;

const NON_REACHING: ReadonlySet<string> = new Set(NON_REACHING_FIELDS);

/**
 * Whether going from the stored spec `before` to `after` changes how the upstream is reached: then the
 * edit starts a new generation (a new connection); otherwise the running one serves on. Secret maps
 * are compared as given (a masked stored map against new values counts as a change: never a missed one).
 */
export function editReachesUpstream(before: ServerSpec, after: ServerSpec): boolean {
  const fields = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const field of fields) {
    if (NON_REACHING.has(field)) continue;
    const was = (before as Record<string, unknown>)[field];
    const now = (after as Record<string, unknown>)[field];
    if (!isDeepStrictEqual(was, now)) return true;
  }
  return false;
}
