/**
 * How the byKind index lists servers a page at a time. Each server's status item sits beside its
 * config in the `SERVER` partition — `kindSort` `<name>`, then `<name>#STATUS` (`#` sorts below every
 * character a name may hold) — so one query page brings both. A cursor names the last item a page read.
 */
import { fieldsRefused } from "@mcpgw/core";
import { KINDS, keys } from "./table";

type Item = Record<string, unknown>;

/** Servers on a list page unless asked otherwise, and at most. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1_000;

const STATUS_SUFFIX = "#STATUS";

/** A status item's `kindSort`: right after its server's config in the `SERVER` partition. */
export function statusListSort(name: string): string {
  return `${name}${STATUS_SUFFIX}`;
}

/** Where a list page stopped: the index position of the last item it read. */
export interface ListPosition {
  kindSort: string;
  serverId: string;
}

const POSITION_SORT = /^[A-Za-z0-9_-]{1,64}(?:#STATUS)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The opaque cursor of a position. */
export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.kindSort, position.serverId])).toString("base64url");
}

/** The position a cursor names; anything else is 400 `request.invalid` (never a query that fails). */
export function decodeListCursor(cursor: string): ListPosition {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(parsed) && parsed.length === 2) {
      const [kindSort, serverId] = parsed;
      if (typeof kindSort === "string" && POSITION_SORT.test(kindSort) && UUID.test(String(serverId)))
        return { kindSort, serverId: String(serverId) };
    }
  } catch {
    // not base64url JSON: refused below
  }
  throw fieldsRefused("request.invalid", [
    {
      field: "cursor",
      message: "Not a cursor a page of this list returned: start again from the first page.",
    },
  ]);
}

/** The index key a query resumes after (`ExclusiveStartKey`): the item at `position`. */
export function startKeyOf(position: ListPosition): Item {
  const item = position.kindSort.endsWith(STATUS_SUFFIX)
    ? keys.serverStatus(position.serverId)
    : keys.serverConfig(position.serverId);
  return { kind: KINDS.server, kindSort: position.kindSort, ...item };
}

/** The position of an item of the `SERVER` partition. */
export function positionOf(item: Item): ListPosition {
  // (A config item's id is its key's too: one stored without its `id` still pages on.)
  const keyed = String(item.pk).slice(keys.serverPartition("").length);
  return { kindSort: String(item.kindSort), serverId: String(item.serverId ?? item.id ?? keyed) };
}

/** A config item and the status item found beside it (none when it is kept apart). */
export interface ListPair {
  config: Item;
  status?: Item;
}

/**
 * A page's items, in index order, as configs with their statuses: at most `limit` servers. A status
 * not right after its own config (its config was on the previous page) is skipped. `last` is the last
 * item taken; `more` is true when a further config was left for the next page.
 */
export function pairListItems(
  items: Item[],
  limit: number,
): { pairs: ListPair[]; last: Item | undefined; more: boolean } {
  const pairs: ListPair[] = [];
  let last: Item | undefined;
  for (const item of items) {
    if (item.sk === "CONFIG") {
      if (pairs.length >= limit) return { pairs, last, more: true };
      pairs.push({ config: item });
    } else {
      const current = pairs.at(-1);
      if (current && !current.status && current.config.id === item.serverId) current.status = item;
    }
    last = item;
  }
  return { pairs, last, more: false };
}
