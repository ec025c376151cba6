/**
 * Comparing a tool result that came through the gateway with the one a client gets from the upstream
 * directly. What may differ, and only that, is taken out:
 *
 * - `_meta["io.modelcontextprotocol/serverInfo"]`: a 2026-07-28 result names the server that answered
 *   — the upstream directly, the gateway through it (an `_meta` left empty goes too);
 * - `isError: false` ≡ no `isError` (the spec's default; the gateway always says which);
 * - the time of day server-everything writes into the resources it makes on each call
 *   (`… created at 10:11:12 AM`), which two calls a second apart do not share.
 */
import { SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import type { ToolResult } from "./clients";

const CREATED_AT = /created at .+$/;

/** `result` with the differences above taken out, for a deep-equal comparison. */
export function comparable(result: ToolResult): Record<string, unknown> {
  const { _meta, isError, ...rest } = result as ToolResult & Record<string, unknown>;
  const meta = { ...(_meta ?? {}) };
  delete meta[SERVER_INFO_META_KEY];
  return masked({
    ...rest,
    ...(isError ? { isError } : {}),
    ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  }) as Record<string, unknown>;
}

function masked(value: unknown): unknown {
  if (typeof value === "string") return value.replace(CREATED_AT, "created at <time>");
  if (Array.isArray(value)) return value.map(masked);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, masked(item)]));
  return value;
}
