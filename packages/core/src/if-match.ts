import { AppError } from "./errors";

const TAG = '(?:W/)?(?:"[0-9]{1,15}"|[0-9]{1,15})';
/**
 * An If-Match header as RFC 9110 writes it — `*` or a comma-separated list of entity tags — where our
 * tags are versions: `"3"` (the ETag), also taken bare (`3`) or weak (`W/"3"`).
 */
export const IF_MATCH_PATTERN = new RegExp(`^[ \\t]*(?:\\*|${TAG}(?:[ \\t]*,[ \\t]*${TAG})*)[ \\t]*$`);
/** What a malformed If-Match is told, after its name. */
export const IF_MATCH_MESSAGE = 'must be a version like "3"';

/** What an If-Match asks for: any current version (`*`), or one of these versions. */
export type IfMatch = "*" | number[];

/** Reads an If-Match header; an empty or malformed one is 400 `request.invalid` (never version 0). */
export function parseIfMatch(header: string): IfMatch {
  if (!IF_MATCH_PATTERN.test(header)) throw new AppError("request.invalid", `If-Match ${IF_MATCH_MESSAGE}.`);
  if (header.trim() === "*") return "*";
  return header.split(",").map((tag) => Number(tag.trim().replace(/^W\//, "").replace(/"/g, "")));
}

/** True when a resource at `version` meets the condition (`*` matches any existing version). */
export function ifMatchAllows(condition: IfMatch, version: number): boolean {
  return condition === "*" || condition.includes(version);
}
