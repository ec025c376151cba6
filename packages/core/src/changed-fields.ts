/**
 * Which fields an admin change set or changed, by name only: what the audit trail records of an edit
 * (never a value).
 */

type Fields = Readonly<Record<string, unknown>>;

/**
 * The dotted names of the fields that differ between `before` and `after`, sorted. Plain objects are
 * walked key by key down to the leaves (so a header or env secret is `headers.<Name>` / `env.<NAME>`,
 * and an object that appears or goes names each of its leaves); arrays and other values compare whole.
 * A key holding `undefined` counts as absent; `null` is a value. The answer holds names only.
 */
export function changedFields(before: Fields | undefined, after: Fields | undefined): string[] {
  const names = new Set<string>();
  walk(before ?? {}, after ?? {}, "", names);
  return [...names].sort();
}

function walk(before: unknown, after: unknown, path: string, names: Set<string>): void {
  if (before === undefined && after === undefined) return;
  // Objects (or an object and nothing) are walked; values, arrays and a change of kind compare whole.
  if (walkable(before) && walkable(after)) {
    const from = before ?? {};
    const to = after ?? {};
    for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
      walk(from[key], to[key], path === "" ? key : `${path}.${key}`, names);
    }
    return;
  }
  if (!sameValue(before, after)) names.add(path);
}

function walkable(value: unknown): value is Record<string, unknown> | undefined {
  return value === undefined || isPlainObject(value);
}

/** Deep equality where a key holding `undefined` equals an absent one. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, index) => sameValue(item, b[index]))
    );
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => sameValue(a[key], b[key]));
  }
  return Object.is(a, b);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
