import { AppError } from "./errors";

/** How deeply tool-call arguments (and any JSON body) may nest: objects and arrays, 64 levels. */
export const MAX_JSON_DEPTH = 64;

/** How deeply an upstream's answer may nest: deeper is the upstream's error (502), not re-serialised. */
export const MAX_RESULT_DEPTH = 256;

/**
 * How deeply a parsed JSON value nests (a scalar is 0, `{}` and `[]` are 1), counted without
 * recursion and only up to `limit + 1`: a hostile 10,000-level value costs no stack and little time.
 */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== "object" || current === null) continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push([child, level]);
    }
  }
  return deepest;
}

/** Throws `request.too_deep` (400) when `value` nests deeper than `limit`. */
export function assertJsonDepth(value: unknown, what: string, limit = MAX_JSON_DEPTH): void {
  if (jsonDepth(value, limit) > limit) {
    throw new AppError("request.too_deep", `${what} nest deeper than ${limit} levels.`, { limit });
  }
}
